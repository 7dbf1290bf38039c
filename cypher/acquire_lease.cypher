// Take or renew the namespace's writer lease: granted when nobody holds it, when $owner
// already does, or when the holder's lease has expired (a crashed process). The counter node
// is write-locked first, so two writers racing for a free lease cannot both get it.
// Expiry is judged on the server's clock, so the writers' clocks do not matter.
// $namespace: str; $owner: str (host, pid and a random tag); $ttl_s: int, seconds.
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0
SET m.lock = randomUUID()
WITH m,
     m.lease_owner IS NULL OR m.lease_owner = $owner OR m.lease_expires <= datetime() AS free
SET m.lease_owner = CASE WHEN free THEN $owner ELSE m.lease_owner END,
    m.lease_expires = CASE
      WHEN free THEN datetime() + duration({seconds: $ttl_s}) ELSE m.lease_expires
    END
RETURN free AS acquired, m.lease_owner AS owner, m.lease_expires AS expires
