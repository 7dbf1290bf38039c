// Forget one request: its node, the states and observations it produced, all their
// relationships; the NEXT chain is re-linked around the gap. `forgotten` is 0 when the id is
// not a request of this namespace.
// $namespace: str; $id: str
MATCH (r:Request {namespace: $namespace, id: $id})
OPTIONAL MATCH (prev:Request {namespace: $namespace})-[:NEXT]->(r)
OPTIONAL MATCH (r)-[:NEXT]->(next:Request {namespace: $namespace})
FOREACH (p IN CASE WHEN prev IS NULL OR next IS NULL THEN [] ELSE [prev] END |
  CREATE (p)-[:NEXT]->(next)
)
WITH r
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(n {namespace: $namespace})
  DETACH DELETE n
}
DETACH DELETE r
RETURN count(*) AS forgotten
