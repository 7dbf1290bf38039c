// The sequence number the namespace's next request would get: one past the highest ever
// handed out (the namespace's counter survives forgetting, so an id is never reused) or
// committed (a namespace written before the counter existed, or imported), whichever is higher.
// $namespace: str
// (`seq IS NOT NULL` lets the planner seek the (namespace, seq) index with only the namespace.)
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
CALL () {
  MATCH (r:Request {namespace: $namespace})
  WHERE r.seq IS NOT NULL
  RETURN coalesce(max(r.seq), 0) AS committed
}
WITH coalesce(m.last_seq, 0) AS counted, committed
RETURN CASE WHEN counted > committed THEN counted ELSE committed END + 1 AS seq
