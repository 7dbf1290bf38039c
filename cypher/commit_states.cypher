// Commit step 2: the request's states, each with its category label, PRODUCED by the request.
// $namespace: str; $request_id: str;
// $states: list of {props: map of StateNode properties (no namespace; timestamps as ISO 8601
// text), label: Category.label}.
MATCH (r:Request {namespace: $namespace, id: $request_id})
UNWIND $states AS row
CREATE (s:State)
SET s = row.props, s.namespace = $namespace,
    s.created_at = datetime(row.props.created_at), s.updated_at = datetime(row.props.updated_at)
SET s:$(row.label)
CREATE (r)-[:PRODUCED]->(s)
RETURN count(s) AS created
