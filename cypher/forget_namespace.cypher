// Forget a whole namespace: requests, states, observations, decisions, drafts and all their relationships.
// $namespace: str
// (The IS NOT NULL predicates let each branch seek its label's namespace-leading index.)
CALL () {
  MATCH (n:Request {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:State {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Observation {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:ActionDecision {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Draft {namespace: $namespace}) WHERE n.request_id IS NOT NULL RETURN n
}
DETACH DELETE n
