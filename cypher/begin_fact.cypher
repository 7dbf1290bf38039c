// The start of a one-call request (a fact recorded and committed in one transaction): the
// namespace's counter node is write-locked (commits around it wait) and the next seq handed
// out. Other requests may be open meanwhile; a crash rolls the seq back with the rest. A
// request committed within the last $window_s seconds under the same $key (a retry whose
// acknowledgement was lost) comes back as `duplicate`, and no seq is handed out: the lock
// makes a retry racing its first attempt wait for it and find it. No seq (null) while the
// namespace is being wholly forgotten, as in allocate_request_seq.
// $namespace: str; $key: str or null; $window_s: int, seconds
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
CALL () {
  // A request whose states were forgotten since is no longer the fact: it is stored anew.
  OPTIONAL MATCH (done:Request {namespace: $namespace, idempotency_key: $key})
  WHERE done.finished_at >= datetime() - duration({seconds: $window_s})
    AND EXISTS { MATCH (:State {namespace: $namespace, request_id: done.id}) }
  RETURN done.id AS duplicate
  LIMIT 1
}
SET m.last_seq = CASE WHEN fenced OR duplicate IS NOT NULL THEN m.last_seq ELSE last + 1 END,
    m.forgetting = CASE WHEN fenced THEN m.forgetting END,
    m.forgetting_until = CASE WHEN fenced THEN m.forgetting_until END
RETURN CASE WHEN fenced THEN null ELSE m.last_seq END AS seq,
       CASE WHEN fenced THEN null ELSE duplicate END AS duplicate,
       m.forgetting AS forgetting, m.forgetting_until AS until
