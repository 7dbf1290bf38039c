// Retention: delete the namespace's states of one category created before a cut-off, with all
// their relationships. Their ids are first dropped from the `cites` lists of the decisions
// that cited them, so no property keeps naming a deleted state. Returns the expired ids (the
// caller scrubs them from drafts).
// $namespace: str; $category: Category value; $before: zoned datetime (a naive one would
// compare as null and match nothing; the repository refuses it).
MATCH (s:State {namespace: $namespace})
WHERE s.category = $category AND s.created_at < $before
WITH collect(s) AS expired, collect(s.id) AS expired_ids
CALL (expired) {
  UNWIND expired AS s
  MATCH (d:ActionDecision {namespace: $namespace})-[:CITES]->(s)
  WITH d, collect(s.id) AS gone
  SET d.cites = [c IN d.cites WHERE NOT c IN gone]
}
FOREACH (s IN expired | DETACH DELETE s)
RETURN expired_ids AS ids
