// The Historical State Index as the agent sees it, as a table: one row per state, with the
// states that superseded it, if any. Switch Browser to the Table view.
// Parameters: set it in Browser first, for example
//   :param namespace => 'demo'
MATCH (r:Request {namespace: $namespace})-[:PRODUCED]->(s:State)
OPTIONAL MATCH (s)<-[:SUPERSEDES]-(newer:State {namespace: $namespace})
WITH r, s, collect(newer.id) AS superseded_by
ORDER BY r.seq, s.created_at
RETURN r.id AS request, r.summary AS request_summary, s.id AS state, s.category AS category,
       s.summary AS summary, superseded_by
