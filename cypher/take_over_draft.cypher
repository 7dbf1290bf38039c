// Take a request's draft for $owner, to resume or discard it: granted when $owner holds it
// already, when its hold has lapsed (its writer stopped or let it go), or when its holder is
// $dead (a process of this host known to have exited). The draft is write-locked first, so
// two writers racing for one lapsed request cannot both get it. Refused (`fenced`) while the
// namespace is being wholly forgotten: the counter node is write-locked before the draft, as
// fence_namespace locks it. Returns the payload when taken; no row when there is no such draft.
// $namespace: str; $request_id: str; $owner: str; $dead: str or null; $hold_s: int, seconds.
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
SET m.lock = randomUUID()
SET d.lock = randomUUID()
WITH d, m, coalesce(m.forgetting_until > datetime(), false) AS fenced
WITH d, m, fenced,
     NOT fenced AND (d.holder = $owner OR d.hold_expires IS NULL OR d.hold_expires <= datetime()
     OR (d.holder = $dead AND $dead IS NOT NULL)) AS free
SET d.holder = CASE WHEN free THEN $owner ELSE d.holder END,
    d.hold_expires = CASE
      WHEN free THEN datetime() + duration({seconds: $hold_s}) ELSE d.hold_expires
    END
RETURN free AS taken, d.holder AS holder, d.hold_expires AS expires,
       CASE WHEN free THEN d.payload END AS payload, fenced,
       m.forgetting AS forgetting, m.forgetting_until AS until
