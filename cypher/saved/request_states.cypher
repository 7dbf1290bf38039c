// A request, the states and observations it produced, and where their relations lead.
// Parameters: set them in Browser first, for example
//   :param namespace => 'demo'
//   :param id => 'r3'
MATCH (r:Request {namespace: $namespace, id: $id})
OPTIONAL MATCH produced = (r)-[:PRODUCED]->(n {namespace: $namespace})
OPTIONAL MATCH linked = (n)-[]->(m {namespace: $namespace})
RETURN r, produced, linked
