// The namespace's action decisions, or one request's, in request and step order.
// $namespace: str; $request_id: str, or null for every request.
// (`id IS NOT NULL` lets the planner seek the (namespace, id) index with only the namespace.)
MATCH (d:ActionDecision {namespace: $namespace})
WHERE d.id IS NOT NULL AND ($request_id IS NULL OR d.request_id = $request_id)
RETURN properties(d) AS props
ORDER BY toInteger(substring(d.request_id, 1)), d.step, d.created_at, d.id
