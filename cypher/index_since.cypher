// The index entries of the requests committed after commit number $since (in any order of
// seq: concurrent requests commit out of seq order), with their state lines, in seq order,
// and the older states each one supersedes (so a cached index can mark them).
// (A namespace's first commit number is one past its highest seq, so requests committed before
// commit numbers existed are never "after" any number an agent has seen.)
// $namespace: str; $since: int;
// $inline_chars: int (a content this short shows on its index line)
MATCH (r:Request {namespace: $namespace})
WHERE r.commit_seq > $since
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
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(s:State)-[:SUPERSEDES]->(old:State {namespace: $namespace})
  RETURN collect(CASE WHEN old IS NOT NULL THEN {source: s.id, target: old.id} END) AS supersedes
}
RETURN r.id AS id, r.seq AS seq, r.summary AS summary, states, supersedes
ORDER BY r.seq
