// The namespace's committed requests, in seq order.
// $namespace: str
MATCH (r:Request {namespace: $namespace})
WHERE r.seq IS NOT NULL
RETURN properties(r) AS props
ORDER BY r.seq
