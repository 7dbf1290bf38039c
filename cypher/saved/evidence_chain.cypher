// A state's evidence chain: the states it rests on (derived from, depends on, refines,
// supersedes, up to 5 hops) and the raw tool observations each of them cites.
// Parameters: set them in Browser first, for example
//   :param namespace => 'demo'
//   :param id => 'r3.hotel_choice'
MATCH chain = (s:State {namespace: $namespace, id: $id})
  -[:DERIVED_FROM|DEPENDS_ON|REFINES|SUPERSEDES*0..5]->(t:State)
WHERE all(n IN nodes(chain) WHERE n.namespace = $namespace)
OPTIONAL MATCH cited = (t)-[:EVIDENCED_BY]->(:Observation {namespace: $namespace})
RETURN chain, cited
