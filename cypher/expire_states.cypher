// Retention: delete the namespace's states of these ids (expiring_states chose them), with all
// their relationships. Their ids are first dropped from the `cites` lists of the decisions
// that cited them, so no property keeps naming a deleted state. Returns the expired ids (the
// caller scrubs them from drafts).
// $namespace: str; $ids: list of state ids.
MATCH (s:State {namespace: $namespace})
WHERE s.id IN $ids
WITH collect(s) AS expired, collect(s.id) AS expired_ids
CALL (expired) {
  UNWIND expired AS s
  MATCH (d:ActionDecision {namespace: $namespace})-[:CITES]->(s)
  WITH d, collect(s.id) AS gone
  SET d.cites = [c IN d.cites WHERE NOT c IN gone]
}
// Their requests' idempotency keys are hashes of what the facts said: they go too, and so do
// the requests' summaries that were an expired state's (one-state requests without SUMMARY).
CALL (expired) {
  UNWIND expired AS s
  MATCH (r:Request {namespace: $namespace, id: s.request_id})
  REMOVE r.idempotency_key
  SET r.summary = CASE WHEN r.summary = s.summary THEN '(' + s.id + ' expired)' ELSE r.summary END
}
FOREACH (s IN expired | DETACH DELETE s)
// The namespace's state count (backfill_namespace_counts.cypher) loses them.
WITH expired_ids
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
SET m.states = m.states - size(expired_ids)
RETURN expired_ids AS ids
