// Forget one state and all its relationships (its observations stay with the request). The
// decisions that cited it keep their record but drop its id from `cites`, so no property of
// the namespace names it any more, and its request loses its idempotency key.
// $namespace: str; $id: str
MATCH (s:State {namespace: $namespace, id: $id})
CALL (s) {
  MATCH (d:ActionDecision {namespace: $namespace})-[:CITES]->(s)
  SET d.cites = [c IN d.cites WHERE c <> s.id]
}
// Its request's idempotency key is a hash of what the fact said: it goes too, and so does the
// request's summary where it was this state's (a one-state request without a SUMMARY).
CALL (s) {
  MATCH (r:Request {namespace: $namespace, id: s.request_id})
  REMOVE r.idempotency_key
  SET r.summary = CASE WHEN r.summary = s.summary THEN '(' + s.id + ' forgotten)' ELSE r.summary END
}
DETACH DELETE s
// The namespace's state count (backfill_namespace_counts.cypher) loses it.
WITH count(*) AS forgotten
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
SET m.states = m.states - forgotten
RETURN forgotten
