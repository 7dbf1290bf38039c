// The namespace's in-flight draft (the most recently saved, should there be several).
// $namespace: str
MATCH (d:Draft {namespace: $namespace})
WHERE d.request_id IS NOT NULL
RETURN d.request_id AS request_id, d.payload AS payload
ORDER BY d.updated_at DESC
LIMIT 1
