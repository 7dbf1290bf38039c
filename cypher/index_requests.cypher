// The index entries of the committed requests whose seqs are in $seqs, in seq order, each with
// its states' lines as index_generation gives them: one round trip for the requests a request's
// text matches whose lines the index did not load.
// $namespace: str; $seqs: list of int;
// $inline_chars: int (a content this short shows on its index line)
MATCH (r:Request {namespace: $namespace})
WHERE r.seq IN $seqs
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(s:State {namespace: $namespace})
  CALL (s) {
    OPTIONAL MATCH (s)<-[:SUPERSEDES]-(newer:State {namespace: $namespace})
    RETURN newer.id AS superseded_by
    ORDER BY newer.created_at DESC, newer.id DESC
    LIMIT 1
  }
  WITH s, superseded_by
  ORDER BY s.created_at, s.id
  // A superseder forgotten or expired since is kept by id on the state (mark_removed): it
  // stays superseded, by a removed state.
  RETURN collect(
    CASE WHEN s IS NOT NULL THEN
      {id: s.id, category: s.category, summary: s.summary,
       content: CASE WHEN size(s.content) <= $inline_chars THEN s.content END,
       superseded_by: coalesce(superseded_by, s.superseded_by_removed),
       superseder_removed: CASE WHEN superseded_by IS NULL THEN s.superseder_removed END}
    END
  ) AS states
}
RETURN r.id AS id, r.seq AS seq, r.summary AS summary, states
ORDER BY r.seq
