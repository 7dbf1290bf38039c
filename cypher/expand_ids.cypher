// Selective expansion: full records for ids that may mix requests, states, observations
// and action decisions.
// Ids not found in this namespace are simply absent.
// $namespace: str; $request_ids, $state_ids, $observation_ids, $decision_ids: lists of ids.
CALL () {
  MATCH (n:Request {namespace: $namespace})
  WHERE n.id IN $request_ids
  RETURN 'request' AS kind, properties(n) AS props
  UNION ALL
  MATCH (n:State {namespace: $namespace})
  WHERE n.id IN $state_ids
  RETURN 'state' AS kind, properties(n) AS props
  UNION ALL
  MATCH (n:Observation {namespace: $namespace})
  WHERE n.id IN $observation_ids
  RETURN 'observation' AS kind, properties(n) AS props
  UNION ALL
  MATCH (n:ActionDecision {namespace: $namespace})
  WHERE n.id IN $decision_ids
  RETURN 'decision' AS kind, properties(n) AS props
}
RETURN kind, props
