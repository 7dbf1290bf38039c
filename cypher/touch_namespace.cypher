// Before deleting anything of a namespace (forget, retention) or loading an import: raise its
// generation, so live agents rebuild their cached index at their next request, and make sure
// its counter is at least the highest committed seq, so forgetting the newest request never
// frees that seq for reuse. Runs in the same transaction as the change it announces.
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
WITH m
CALL () {
  MATCH (r:Request {namespace: $namespace})
  WHERE r.seq IS NOT NULL
  RETURN coalesce(max(r.seq), 0) AS committed
}
SET m.generation = m.generation + 1,
    m.last_seq = CASE WHEN m.last_seq > committed THEN m.last_seq ELSE committed END
RETURN m.generation AS generation
