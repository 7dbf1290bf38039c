// Everything each committed request holds, as one row per request in commit order: the shape
// a RequestBundle is rebuilt from (for JSON Lines export).
// $namespace: str; $types: the state-to-state relationship types (RelationType values).
MATCH (r:Request {namespace: $namespace})
WHERE r.seq IS NOT NULL
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(s:State {namespace: $namespace})
  WITH s
  ORDER BY s.created_at, s.id
  RETURN collect(properties(s)) AS states
}
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(o:Observation {namespace: $namespace})
  WITH o
  ORDER BY o.step, o.created_at, o.id
  RETURN collect(properties(o)) AS observations
}
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(s:State)-[rel]->(t:State {namespace: $namespace})
  WHERE type(rel) IN $types
  WITH s, rel, t
  ORDER BY s.id, type(rel), t.id
  RETURN collect(
    CASE WHEN rel IS NOT NULL THEN {type: type(rel), source: s.id, target: t.id} END
  ) AS relations
}
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(s:State)-[:EVIDENCED_BY]->(o:Observation {namespace: $namespace})
  WITH s, o
  ORDER BY s.id, o.id
  RETURN collect(
    CASE WHEN o IS NOT NULL THEN {state: s.id, observation: o.id} END
  ) AS evidence
}
CALL (r) {
  OPTIONAL MATCH (r)-[:PRODUCED]->(d:ActionDecision {namespace: $namespace})
  WITH d
  ORDER BY d.step, d.created_at, d.id
  RETURN collect(properties(d)) AS decisions
}
RETURN properties(r) AS request, states, observations, relations, evidence, decisions
// In commit order: a request may relate to one of a later seq that committed first.
ORDER BY coalesce(r.commit_seq, r.seq), r.seq
