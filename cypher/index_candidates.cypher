// Older requests that may match a request's text, with their state lines (as index_newest
// gives them), for the index to score: the requests of the states that match $query best in
// the full-text index, at most $limit of them by their best hit, and the requests of the
// namespace's last $recent commits. The full-text index is eventually consistent and this query
// does not wait for it (that wait depends on every pending write of the database), so a commit
// of the last moments may not be in it yet: the recent commits are read from the graph instead.
// Only requests below seq $below (the newer ones are loaded with their lines already) and
// committed at or before commit number $upto (the ones the index has counted) are returned.
// $query is built like search_states' (plain words and the namespace's term).
// $namespace: str; $query: str; $scan: int (index hits read); $limit: int; $below: int;
// $upto: int; $recent: int; $inline_chars: int (a content this short shows on its index line)
CALL () {
  CALL db.index.fulltext.queryNodes('flowstate_state_search', $query, {limit: $scan})
  YIELD node, score
  WITH node AS s, score
  WHERE s.namespace = $namespace AND s.id IS NOT NULL
  MATCH (r:Request {namespace: $namespace, id: s.request_id})
  WHERE r.seq < $below AND coalesce(r.commit_seq, 0) <= $upto
  WITH r, max(score) AS best
  ORDER BY best DESC, r.seq DESC
  LIMIT $limit
  RETURN r
  UNION
  MATCH (r:Request {namespace: $namespace})
  WHERE $upto - $recent < r.commit_seq <= $upto AND r.seq < $below
  RETURN r
}
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
