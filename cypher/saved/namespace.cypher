// The whole namespace: every request in order, what each produced, and every relation.
// Drafts (in-flight requests) are left out. Large namespaces: add a LIMIT.
// Parameters: set it in Browser first, for example
//   :param namespace => 'demo'
MATCH (r:Request {namespace: $namespace})
WHERE r.seq IS NOT NULL
OPTIONAL MATCH next = (r)-[:NEXT]->(:Request)
OPTIONAL MATCH produced = (r)-[:PRODUCED]->(n {namespace: $namespace})
OPTIONAL MATCH linked = (n)-[]->(m {namespace: $namespace})
RETURN r, next, produced, linked
