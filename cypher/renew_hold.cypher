// Renew $owner's hold on a request's draft while it still holds it (a long model or tool call
// between saves). `renewed` false when another writer took it over; no row when the draft is
// gone.
// $namespace: str; $request_id: str; $owner: str; $hold_s: int, seconds.
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
WITH d, d.holder = $owner AS mine
SET d.hold_expires = CASE
      WHEN mine THEN datetime() + duration({seconds: $hold_s}) ELSE d.hold_expires
    END
RETURN mine AS renewed, d.holder AS holder, d.hold_expires AS expires
