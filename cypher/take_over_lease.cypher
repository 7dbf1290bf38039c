// Take the writer lease from a holder known to be dead (a process of this host that no longer
// runs), without waiting for its lease to expire. Only if $dead still holds it.
// $namespace: str; $dead: str; $owner: str; $ttl_s: int, seconds.
MATCH (m:Namespace {namespace: $namespace})
WHERE m.lease_owner = $dead
SET m.lease_owner = $owner, m.lease_expires = datetime() + duration({seconds: $ttl_s})
RETURN count(m) AS taken
