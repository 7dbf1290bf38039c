// Forget a whole namespace: requests, states, observations, decisions, drafts and all their
// relationships; forget_namespace_node then deletes its counter, so the namespace is wholly
// removed and a later request there starts again at r1 (documented in the README).
// Deleted in batches (IN TRANSACTIONS, so it runs in an auto-commit transaction): a namespace
// of any size fits in the transaction memory limit. If it is cut short, running it again
// finishes the job.
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
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
