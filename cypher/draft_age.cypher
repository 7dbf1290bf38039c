// The namespace's open request as another server sees it: its draft's id, how many seconds
// ago it was last saved (on the server's clock, like the lease), and the live writer lease,
// if any. An idle draft is judged by its last save, never by when a server first saw it.
// $namespace: str
OPTIONAL MATCH (d:Draft {namespace: $namespace})
WHERE d.request_id IS NOT NULL
WITH d
ORDER BY d.updated_at DESC
LIMIT 1
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
RETURN d.request_id AS request_id,
       duration.inSeconds(d.updated_at, datetime()).seconds AS idle_s,
       m.lease_owner AS owner,
       CASE WHEN m.lease_expires > datetime() THEN m.lease_expires END AS expires
