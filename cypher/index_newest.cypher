// The newest committed requests below seq $before, newest first, at most $limit, with their
// state lines (as `index_generation` gives them): the index loads only as many as it can show,
// whatever the namespace's size.
// $namespace: str; $before: int; $limit: int;
// $inline_chars: int (a content this short shows on its index line)
MATCH (r:Request {namespace: $namespace})
WHERE r.seq < $before
WITH r ORDER BY r.seq DESC LIMIT $limit
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
ORDER BY r.seq DESC
