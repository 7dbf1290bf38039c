// The start of forgetting a whole namespace: fence it, so that no request begins there, opens
// its draft or is taken over until the forget has ended. The id counter that the forget deletes
// last then never hands out again an id that a request still works on. The counter node is
// write-locked first, as every begin locks it, so a begin either came before (its draft is
// seen here) or meets the fence. Not fenced while a live writer holds a request there, or
// while another forget's fence has not lapsed, unless $force (which takes that fence over: the
// other forget stops at its next batch). The fence lasts $hold_s seconds on
// the server's clock; each batch of the deletion renews it (forget_namespace_batch).
// $namespace: str; $owner: str, the forgetting writer; $force: bool; $hold_s: int, seconds.
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
WITH m, coalesce(m.forgetting_until > datetime() AND m.forgetting <> $owner, false) AS other
CALL () {
  OPTIONAL MATCH (d:Draft {namespace: $namespace})
  WHERE d.request_id IS NOT NULL AND d.hold_expires > datetime()
  WITH d ORDER BY d.updated_at DESC
  RETURN collect({request_id: d.request_id, holder: d.holder, expires: d.hold_expires}) AS held
}
WITH m, other, [h IN held WHERE h.request_id IS NOT NULL] AS held
WITH m, other, held, $force OR (NOT other AND size(held) = 0) AS fenced
SET m.forgetting = CASE WHEN fenced THEN $owner ELSE m.forgetting END,
    m.forgetting_until = CASE
      WHEN fenced THEN datetime() + duration({seconds: $hold_s}) ELSE m.forgetting_until
    END
RETURN fenced, other, held, m.forgetting AS forgetting, m.forgetting_until AS until
