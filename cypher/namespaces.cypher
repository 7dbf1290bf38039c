// Every namespace of the database with what it holds: requests, states, observations, action
// decisions, drafts (open requests), the last request seq handed out, and how many open
// requests a live writer holds now. The one query that spans namespaces: it is for the operator's
// `flowstate namespaces`, and returns counts and names only, never content.
CALL () {
  MATCH (n:Request) WHERE n.namespace IS NOT NULL RETURN n.namespace AS ns, 'request' AS kind
  UNION ALL
  MATCH (n:State) WHERE n.namespace IS NOT NULL RETURN n.namespace AS ns, 'state' AS kind
  UNION ALL
  MATCH (n:Observation) WHERE n.namespace IS NOT NULL
  RETURN n.namespace AS ns, 'observation' AS kind
  UNION ALL
  MATCH (n:ActionDecision) WHERE n.namespace IS NOT NULL
  RETURN n.namespace AS ns, 'decision' AS kind
  UNION ALL
  MATCH (n:Draft) WHERE n.namespace IS NOT NULL RETURN n.namespace AS ns, 'draft' AS kind
  UNION ALL
  MATCH (n:Draft) WHERE n.namespace IS NOT NULL AND n.hold_expires > datetime()
  RETURN n.namespace AS ns, 'held' AS kind
  UNION ALL
  MATCH (n:Namespace) WHERE n.namespace IS NOT NULL RETURN n.namespace AS ns, 'counter' AS kind
}
WITH ns,
     sum(CASE kind WHEN 'request' THEN 1 ELSE 0 END) AS requests,
     sum(CASE kind WHEN 'state' THEN 1 ELSE 0 END) AS states,
     sum(CASE kind WHEN 'observation' THEN 1 ELSE 0 END) AS observations,
     sum(CASE kind WHEN 'decision' THEN 1 ELSE 0 END) AS decisions,
     sum(CASE kind WHEN 'draft' THEN 1 ELSE 0 END) AS drafts,
     sum(CASE kind WHEN 'held' THEN 1 ELSE 0 END) AS held
OPTIONAL MATCH (m:Namespace {namespace: ns})
RETURN ns AS namespace, requests, states, observations, decisions, drafts,
       coalesce(m.last_seq, 0) AS last_seq, held
ORDER BY namespace
