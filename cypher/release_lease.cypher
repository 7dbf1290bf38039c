// Give the writer lease back, only if $owner holds it (a lease taken over after it expired
// belongs to its new holder). `released` is 0 when $owner did not hold it.
// $namespace: str; $owner: str
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
WHERE m.lease_owner = $owner
REMOVE m.lease_owner, m.lease_expires
RETURN count(m) AS released
