// Every draft of the namespace (normally at most one), for scrubbing forgotten content out of
// their payloads in the transaction that forgets it.
// $namespace: str
MATCH (d:Draft {namespace: $namespace})
WHERE d.request_id IS NOT NULL
RETURN d.request_id AS request_id, d.payload AS payload
ORDER BY d.request_id
