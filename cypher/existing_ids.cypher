// Which of the given state, observation and request ids still exist in the namespace (a
// draft is scrubbed of the ones forgotten while its request ran).
// $namespace: str; $state_ids, $observation_ids, $request_ids: lists of ids.
CALL () {
  MATCH (n:State {namespace: $namespace})
  WHERE n.id IN $state_ids
  RETURN n.id AS id
  UNION ALL
  MATCH (n:Observation {namespace: $namespace})
  WHERE n.id IN $observation_ids
  RETURN n.id AS id
  UNION ALL
  MATCH (n:Request {namespace: $namespace})
  WHERE n.id IN $request_ids
  RETURN n.id AS id
}
RETURN collect(id) AS ids
