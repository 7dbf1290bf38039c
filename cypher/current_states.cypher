// The current states of one namespace whose key starts with $prefix: none superseded, by a
// state still there or by one forgotten or expired since (`superseded_by_removed`), oldest
// first. A draft holds no State node: only committed states are read.
// $namespace: str; $prefix: str (a key's beginning: lowercase letters, digits, '_')
MATCH (s:State {namespace: $namespace})
WHERE s.id IS NOT NULL AND s.key STARTS WITH $prefix AND s.superseded_by_removed IS NULL
  AND NOT EXISTS { MATCH (:State {namespace: $namespace})-[:SUPERSEDES]->(s) }
RETURN s {.*, created_at: toString(s.created_at), updated_at: toString(s.updated_at)} AS state
ORDER BY s.created_at, s.id
