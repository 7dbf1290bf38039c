// Forget one request: its node, the states, observations and decisions it produced, all their
// relationships, and a draft left under its id; the NEXT chain is re-linked around the gap.
// Later decisions that cited its states drop those ids from `cites`. `forgotten` is 0 when the
// id is not a request of this namespace.
// $namespace: str; $id: str
MATCH (r:Request {namespace: $namespace, id: $id})
OPTIONAL MATCH (prev:Request {namespace: $namespace})-[:NEXT]->(r)
OPTIONAL MATCH (r)-[:NEXT]->(next:Request {namespace: $namespace})
FOREACH (p IN CASE WHEN prev IS NULL OR next IS NULL THEN [] ELSE [prev] END |
  CREATE (p)-[:NEXT]->(next)
)
WITH r
CALL (r) {
  MATCH (r)-[:PRODUCED]->(s:State {namespace: $namespace})
  MATCH (d:ActionDecision {namespace: $namespace})-[:CITES]->(s)
  WITH d, collect(s.id) AS gone
  SET d.cites = [c IN d.cites WHERE NOT c IN gone]
}
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(n {namespace: $namespace})
  WITH n, CASE WHEN n:State THEN 1 ELSE 0 END AS state
  DETACH DELETE n
  RETURN sum(state) AS states
}
CALL (r) {
  OPTIONAL MATCH (draft:Draft {namespace: $namespace, request_id: r.id})
  DELETE draft
}
DETACH DELETE r
// The namespace's counts (backfill_namespace_counts.cypher) lose the request and its states.
WITH states
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
SET m.requests = m.requests - 1, m.states = m.states - states
RETURN count(*) AS forgotten
