// The start of a one-call request (a fact recorded and committed in one transaction): the
// counter node is write-locked, so no other writer can take the lease or a seq until this
// transaction ends; the request may go on only while no other live writer holds the lease
// and no request of the namespace is open (a draft). Only then is the next seq handed out.
// $namespace: str; $owner: str (this writer; a lease it already holds does not block it)
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0
SET m.lock = randomUUID()
WITH m,
     m.lease_owner IS NULL OR m.lease_owner = $owner OR m.lease_expires <= datetime() AS free
CALL () {
  OPTIONAL MATCH (d:Draft {namespace: $namespace})
  WHERE d.request_id IS NOT NULL
  RETURN d.request_id AS open_request
  ORDER BY d.updated_at DESC
  LIMIT 1
}
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
WITH m, free, open_request,
     CASE WHEN m.last_seq > committed THEN m.last_seq ELSE committed END AS last
SET m.last_seq = CASE WHEN free AND open_request IS NULL THEN last + 1 ELSE m.last_seq END
RETURN free AND open_request IS NULL AS started, m.last_seq AS seq, open_request,
       m.lease_owner AS owner,
       CASE WHEN m.lease_expires > datetime() THEN m.lease_expires END AS expires
