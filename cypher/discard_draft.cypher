// Drop a request's draft: nothing of it is committed. Only its holder, or anyone once its hold
// has lapsed ($owner null: whoever asks, as when a namespace is forgotten). `deleted` 0 and the
// holder when another live writer holds it; no row when there is no such draft.
// $namespace: str; $request_id: str; $owner: str or null
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
WITH d, d.holder AS holder, d.hold_expires AS expires,
     $owner IS NULL OR d.holder = $owner OR d.hold_expires IS NULL
     OR d.hold_expires <= datetime() AS may
CALL (d, may) {
  WITH d WHERE may
  DELETE d
}
RETURN CASE WHEN may THEN 1 ELSE 0 END AS deleted, holder, expires
