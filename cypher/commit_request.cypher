// Commit step 1: the request node, linked by NEXT from the namespace's latest earlier request.
// $namespace: str; $request: map of Request properties (usage flattened, no namespace;
// timestamps as ISO 8601 text).
// Returns how many requests of the namespace come after it; the caller aborts unless 0, so the
// NEXT chain always follows seq order. A duplicate id fails the uniqueness constraint.
OPTIONAL MATCH (prev:Request {namespace: $namespace})
WHERE prev.seq < $request.seq
WITH prev
ORDER BY prev.seq DESC
LIMIT 1
CREATE (r:Request)
SET r = $request, r.namespace = $namespace,
    r.started_at = datetime($request.started_at), r.finished_at = datetime($request.finished_at)
FOREACH (p IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (p)-[:NEXT]->(r))
RETURN COUNT { MATCH (later:Request {namespace: $namespace}) WHERE later.seq > r.seq } AS later
