// The namespace's counter node as a cheap stamp: `epoch` changes when the namespace is wholly
// forgotten and written again, `generation` at every forget, retention run and import. An
// agent compares the stamp at each request start with the one its cached index was built at.
// Also the current writer's lease, if any. All null when the node does not exist.
// $namespace: str
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
RETURN m.epoch AS epoch, m.generation AS generation, m.last_seq AS last_seq,
       m.lease_owner AS owner,
       CASE WHEN m.lease_expires > datetime() THEN m.lease_expires END AS expires
