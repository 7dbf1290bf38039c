// The sequence number the namespace's next request gets: one past the highest committed one.
// $namespace: str
// (`seq IS NOT NULL` lets the planner seek the (namespace, seq) index with only the namespace.)
MATCH (r:Request {namespace: $namespace})
WHERE r.seq IS NOT NULL
RETURN coalesce(max(r.seq), 0) + 1 AS seq
