// Save a request's serialized active state (opaque JSON), only while $owner holds its draft:
// a writer whose hold lapsed and was taken over, or whose draft another writer discarded,
// saves nothing (no row when the draft is gone, `saved` false when another holds it). Renews
// the hold.
// $namespace: str; $request_id: str; $payload: str; $owner: str; $hold_s: int, seconds.
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
WITH d, d.holder = $owner AS mine
SET d.payload = CASE WHEN mine THEN $payload ELSE d.payload END,
    d.updated_at = CASE WHEN mine THEN datetime() ELSE d.updated_at END,
    d.hold_expires = CASE
      WHEN mine THEN datetime() + duration({seconds: $hold_s}) ELSE d.hold_expires
    END
RETURN mine AS saved, d.holder AS holder, d.hold_expires AS expires
