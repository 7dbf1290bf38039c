// Provenance of one state: the states reached from it by outgoing DERIVED_FROM, DEPENDS_ON,
// REFINES, SUPERSEDES and CONTRADICTS edges (every hop inside the namespace, at most
// $max_depth hops, each state once at its shortest distance), the observations those states
// cite, the requests that produced any of them, the edges between all of these, and for each
// state the newer states that supersede it (from anywhere in the namespace: validity, not
// lineage). No row when the id is not a state of this namespace.
// $namespace: str; $id: state id; $max_depth: int, 0..20 (the pattern's literal bound; the
// repository refuses more).
MATCH (start:State {namespace: $namespace, id: $id})
CALL (start) {
  MATCH p = ANY SHORTEST (start)
    (()-[:DERIVED_FROM|DEPENDS_ON|REFINES|SUPERSEDES|CONTRADICTS]->
     (:State {namespace: $namespace})){0,20}
    (t:State)
  WHERE length(p) <= $max_depth
  WITH t, length(p) AS depth
  ORDER BY depth, t.id
  RETURN collect(t) AS states
}
CALL (states) {
  UNWIND states AS a
  MATCH (a)-[rel:DERIVED_FROM|DEPENDS_ON|REFINES|SUPERSEDES|CONTRADICTS]->(b:State)
  WHERE b.namespace = $namespace AND b IN states
  RETURN collect({source: a.id, type: type(rel), target: b.id}) AS relations
}
CALL (states) {
  UNWIND states AS s
  MATCH (s)-[:EVIDENCED_BY]->(o:Observation {namespace: $namespace})
  RETURN collect(DISTINCT o) AS observations,
         collect({source: s.id, type: 'EVIDENCED_BY', target: o.id}) AS evidence
}
CALL (states, observations) {
  UNWIND states + observations AS n
  MATCH (r:Request {namespace: $namespace})-[:PRODUCED]->(n)
  RETURN collect(DISTINCT r) AS requests,
         collect({source: r.id, type: 'PRODUCED', target: n.id}) AS produced
}
CALL (states) {
  UNWIND states AS s
  MATCH (newer:State {namespace: $namespace})-[:SUPERSEDES]->(s)
  RETURN collect({state: s.id, by: newer.id}) AS superseded
}
RETURN [s IN states | properties(s)] AS states,
       [o IN observations | properties(o)] AS observations,
       [r IN requests | properties(r)] AS requests,
       relations + evidence + produced AS edges,
       superseded
