// Commit step 3: the raw observations the request's states cite, PRODUCED by the request.
// $namespace: str; $request_id: str; $observations: list of maps of Observation properties
// (timestamps as ISO 8601 text).
MATCH (r:Request {namespace: $namespace, id: $request_id})
UNWIND $observations AS props
CREATE (o:Observation)
SET o = props, o.namespace = $namespace, o.created_at = datetime(props.created_at)
CREATE (r)-[:PRODUCED]->(o)
RETURN count(o) AS created
