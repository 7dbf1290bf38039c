// Every open request of the namespace (a draft: running, or interrupted), newest first, with
// who holds it and until when (`held` false once the hold lapsed: anyone may resume or discard
// it), how long since it was last saved (`idle_s`, on the server's clock), and its payload (the
// serialized active state).
// $namespace: str
MATCH (d:Draft {namespace: $namespace})
WHERE d.request_id IS NOT NULL
RETURN d.request_id AS request_id, d.holder AS holder, d.hold_expires AS expires,
       coalesce(d.hold_expires > datetime(), false) AS held,
       d.created_at AS created_at, d.updated_at AS updated_at,
       duration.inSeconds(d.updated_at, datetime()).seconds AS idle_s, d.payload AS payload
ORDER BY d.updated_at DESC
