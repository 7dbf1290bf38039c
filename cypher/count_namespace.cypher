// How many nodes and relationships a namespace holds (drafts included).
// $namespace: str
CALL () {
  MATCH (n:Request {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:State {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Observation {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:ActionDecision {namespace: $namespace}) WHERE n.id IS NOT NULL RETURN n
  UNION ALL
  MATCH (n:Draft {namespace: $namespace}) WHERE n.request_id IS NOT NULL RETURN n
}
WITH collect(n) AS nodes
CALL (nodes) {
  UNWIND nodes AS n
  MATCH (n)-[rel]-()
  RETURN count(DISTINCT rel) AS relationships
}
RETURN size(nodes) AS nodes, relationships
