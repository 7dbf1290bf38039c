// Commit step 5: states citing the raw observations they rest on.
// $namespace: str; $evidence: list of {state: str, observation: str}.
UNWIND $evidence AS row
MATCH (s:State {namespace: $namespace, id: row.state})
MATCH (o:Observation {namespace: $namespace, id: row.observation})
MERGE (s)-[:EVIDENCED_BY]->(o)
RETURN count(*) AS created
