// Renew a writer's lease while it still holds it: the lease must still name $owner (expired
// or not: an expired lease nobody took is still its). A writer whose lease was taken over, or
// released by another writer (say after discarding its request), gets it back only by
// acquiring it anew at the start of a request, never by a save or a commit. The counter node
// is write-locked first. No row when the namespace has no counter node (it was forgotten).
// $namespace: str; $owner: str; $ttl_s: int, seconds.
MATCH (m:Namespace {namespace: $namespace})
SET m.lock = randomUUID()
WITH m, coalesce(m.lease_owner = $owner, false) AS mine
SET m.lease_expires = CASE
      WHEN mine THEN datetime() + duration({seconds: $ttl_s}) ELSE m.lease_expires
    END
RETURN mine AS renewed, m.lease_owner AS owner, m.lease_expires AS expires
