// Open a request's draft, held by $owner: the first save of a request that was just given its
// id. The uniqueness constraint on (namespace, request_id) refuses a second open of one id.
// The hold ends on the server's clock unless renewed (every save renews it).
// $namespace: str; $request_id: str; $payload: str; $owner: str; $hold_s: int, seconds.
CREATE (d:Draft {namespace: $namespace, request_id: $request_id})
SET d.payload = $payload, d.created_at = datetime(), d.updated_at = datetime(),
    d.holder = $owner, d.hold_expires = datetime() + duration({seconds: $hold_s})
RETURN true AS saved, d.holder AS holder, d.hold_expires AS expires
