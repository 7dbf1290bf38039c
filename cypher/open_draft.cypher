// Open a request's draft, held by $owner: the first save of a request that was just given its
// id. The uniqueness constraint on (namespace, request_id) refuses a second open of one id.
// The hold ends on the server's clock unless renewed (every save renews it).
// The counter node is write-locked first, as fence_namespace locks it: nothing is opened
// (`fenced`) while the namespace is being wholly forgotten, nor (`counted` false, or no row
// when the counter is gone) when the counter that handed the id out ($epoch) was deleted by
// such a forget meanwhile, since it hands that id out again. With no $epoch (an id not handed
// out by this process), the counter is raised to cover the id instead.
// $namespace: str; $request_id: str; $seq: int, its seq; $epoch: str or null;
// $payload: str; $owner: str; $hold_s: int, seconds.
OPTIONAL MATCH (found:Namespace {namespace: $namespace})
WITH found WHERE found IS NOT NULL OR $epoch IS NULL
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0
SET m.lock = randomUUID()
WITH m, coalesce(m.forgetting_until > datetime(), false) AS fenced,
     $epoch IS NULL OR m.epoch = $epoch AS counted
WITH m, fenced, counted, NOT fenced AND counted AS open
SET m.last_seq = CASE WHEN open AND m.last_seq < $seq THEN $seq ELSE m.last_seq END
FOREACH (_ IN CASE WHEN open THEN [1] ELSE [] END |
  CREATE (d:Draft {namespace: $namespace, request_id: $request_id})
  SET d.payload = $payload, d.created_at = datetime(), d.updated_at = datetime(),
      d.holder = $owner, d.hold_expires = datetime() + duration({seconds: $hold_s})
)
RETURN open AS saved, fenced, counted, CASE WHEN open THEN $owner END AS holder,
       CASE WHEN open THEN datetime() + duration({seconds: $hold_s}) END AS expires,
       m.forgetting AS forgetting, m.forgetting_until AS until
