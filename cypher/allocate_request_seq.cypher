// Hand out the namespace's next request seq and record it on the namespace's counter node, so
// the same id is never handed out twice, even after the request is forgotten.
// The counter node is write-locked (the `lock` write) before it is read, so two concurrent
// allocations cannot both read the same value. No seq (null) while the namespace is being
// wholly forgotten (`forgetting` holds the fence until `until`, see fence_namespace): that
// forget deletes the counter last, and the id would be handed out again. A fence that lapsed
// (its forget stopped) is lifted here, so that forget, if it still runs, stops at its next
// batch instead of deleting the counter. `epoch` says which counter handed the id out.
// $namespace: str
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0, m.requests = -1
WITH m
CALL (m) {
  // A counter just created counts what the namespace holds: nothing, unless it was written
  // before counters existed (backfill_namespace_counts.cypher says who keeps the counts).
  WITH m WHERE m.requests = -1
  SET m.requests = COUNT { MATCH (r:Request {namespace: $namespace}) WHERE r.id IS NOT NULL },
      m.states = COUNT { MATCH (s:State {namespace: $namespace}) WHERE s.id IS NOT NULL }
}
SET m.lock = randomUUID()
WITH m, coalesce(m.forgetting_until > datetime(), false) AS fenced
CALL () {
  // The newest committed request read from the (namespace, seq) index in its order (both
  // keys in the ORDER BY let the planner use it): one entry, where max() read every request.
  OPTIONAL MATCH (r:Request)
  WHERE r.namespace = $namespace AND r.seq IS NOT NULL
  WITH r
  ORDER BY r.namespace DESC, r.seq DESC
  LIMIT 1
  RETURN coalesce(r.seq, 0) AS committed
}
WITH m, fenced, CASE WHEN m.last_seq > committed THEN m.last_seq ELSE committed END AS last
SET m.last_seq = CASE WHEN fenced THEN m.last_seq ELSE last + 1 END,
    m.forgetting = CASE WHEN fenced THEN m.forgetting END,
    m.forgetting_until = CASE WHEN fenced THEN m.forgetting_until END
RETURN CASE WHEN fenced THEN null ELSE m.last_seq END AS seq, m.epoch AS epoch,
       m.forgetting AS forgetting, m.forgetting_until AS until
