// One batch of forgetting a whole namespace, in its own transaction, while this forget holds
// the namespace's fence (fence_namespace): up to $batch of its requests, states, observations,
// decisions and drafts with all their relationships. The batch that finds nothing left deletes
// the counter node too, so the namespace is wholly removed and ids start again at r1; a forget
// cut short keeps the counter (run it again to finish). Each batch renews the fence. `mine` is
// false when the fence is no longer this forget's (it lapsed and a request began meanwhile):
// the forget stops and deletes nothing more. No row when the counter node is gone.
// $namespace: str; $owner: str, the forgetting writer; $batch: int; $hold_s: int, seconds.
// (The IS NOT NULL predicates let each branch seek its label's namespace-leading index.)
MATCH (m:Namespace {namespace: $namespace})
SET m.lock = randomUUID()
WITH m, coalesce(m.forgetting = $owner, false) AS mine
SET m.forgetting_until = CASE
  WHEN mine THEN datetime() + duration({seconds: $hold_s}) ELSE m.forgetting_until
END
WITH m, mine
CALL (mine) {
  WITH * WHERE mine
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
  WITH n LIMIT $batch
  WITH n, CASE WHEN n:Request THEN 1 ELSE 0 END AS request,
       CASE WHEN n:State THEN 1 ELSE 0 END AS state
  DETACH DELETE n
  RETURN count(*) AS deleted, sum(request) AS requests, sum(state) AS states
}
// A forget cut short keeps the counter: its counts stay true (backfill_namespace_counts.cypher).
SET m.requests = m.requests - requests, m.states = m.states - states
WITH m, mine, deleted
CALL (m, mine, deleted) {
  WITH * WHERE mine AND deleted = 0
  DETACH DELETE m
  RETURN count(*) AS counters
}
RETURN mine, deleted, counters > 0 AS done
