// The namespace's counter node as a cheap stamp: `epoch` changes when the namespace is wholly
// forgotten and written again, `generation` at every forget, retention run and import, and
// `committed` counts commits (every commit, in any order of seq, raises it). An agent compares
// the stamp with the one its cached index was built at: a new `committed` means requests to
// append, a new epoch or generation an index to rebuild. All null when the node does not exist.
// $namespace: str
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
RETURN m.epoch AS epoch, m.generation AS generation, m.last_seq AS last_seq,
       coalesce(m.committed, m.last_seq) AS committed
