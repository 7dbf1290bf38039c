// Open a request's draft, held by $owner: the first save of a request that was just given its
// id. The uniqueness constraint on (namespace, request_id) refuses a second open of one id.
// The hold ends on the server's clock unless renewed (every save renews it).
// The counter node is write-locked first, as fence_namespace locks it: nothing is opened
// (`fenced`) while the namespace is being wholly forgotten, nor (`counted` false) when the
// counter that handed the id out ($epoch) was deleted by such a forget meanwhile, since the
// new counter hands that id out again. $epoch is null for an id this process did not hand out.
// $namespace: str; $request_id: str; $epoch: str or null; $payload: str; $owner: str;
// $hold_s: int, seconds.
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
SET m.lock = randomUUID()
WITH m, coalesce(m.forgetting_until > datetime(), false) AS fenced,
     $epoch IS NULL OR coalesce(m.epoch = $epoch, false) AS counted
WITH m, fenced, counted, NOT fenced AND counted AS open
FOREACH (_ IN CASE WHEN open THEN [1] ELSE [] END |
  CREATE (d:Draft {namespace: $namespace, request_id: $request_id})
  SET d.payload = $payload, d.created_at = datetime(), d.updated_at = datetime(),
      d.holder = $owner, d.hold_expires = datetime() + duration({seconds: $hold_s})
)
RETURN open AS saved, fenced, counted, CASE WHEN open THEN $owner END AS holder,
       CASE WHEN open THEN datetime() + duration({seconds: $hold_s}) END AS expires,
       m.forgetting AS forgetting, m.forgetting_until AS until
