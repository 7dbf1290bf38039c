// Commit step 6: the approval decisions on consequential tool calls, PRODUCED by the request,
// each CITES-linked to the states it relied on (this request's own, written in step 2, or
// earlier ones of this namespace). Cited ids that are not states of this namespace are
// returned as `missing` and the caller aborts the whole commit.
// $namespace: str; $request_id: str; $decisions: list of maps of ActionDecision properties
// (no namespace; `cites` a list of state ids; timestamps as ISO 8601 text).
MATCH (r:Request {namespace: $namespace, id: $request_id})
UNWIND $decisions AS props
CREATE (d:ActionDecision)
SET d = props, d.namespace = $namespace, d.created_at = datetime(props.created_at)
CREATE (r)-[:PRODUCED]->(d)
WITH d
CALL (d) {
  UNWIND d.cites AS cited
  OPTIONAL MATCH (s:State {namespace: $namespace, id: cited})
  CALL (d, s) {
    WITH *
    WHERE s IS NOT NULL
    MERGE (d)-[:CITES]->(s)
  }
  RETURN collect(CASE WHEN s IS NULL THEN cited END) AS missing
}
WITH count(d) AS created, collect(missing) AS missing
RETURN created, reduce(acc = [], m IN missing | acc + m) AS missing
