// Hand out the namespace's next request seq and record it on the namespace's counter node, so
// the same id is never handed out twice, even after the request is forgotten.
// The counter node is write-locked (the `lock` write) before it is read, so two concurrent
// allocations cannot both read the same value.
// $namespace: str
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0
SET m.lock = randomUUID()
WITH m
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
WITH m, CASE WHEN m.last_seq > committed THEN m.last_seq ELSE committed END AS last
SET m.last_seq = last + 1
RETURN m.last_seq AS seq
