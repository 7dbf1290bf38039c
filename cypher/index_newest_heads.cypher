// The newest committed requests below seq $before, newest first, at most $limit, without
// their state lines: id, seq, summary and how many states each has (counted through the
// (namespace, request_id) index). For requests the index shows on one line at most.
// $namespace: str; $before: int; $limit: int
MATCH (r:Request {namespace: $namespace})
WHERE r.seq < $before
WITH r ORDER BY r.seq DESC LIMIT $limit
RETURN r.id AS id, r.seq AS seq, r.summary AS summary,
       COUNT { MATCH (s:State {namespace: $namespace, request_id: r.id}) } AS state_count
ORDER BY r.seq DESC
