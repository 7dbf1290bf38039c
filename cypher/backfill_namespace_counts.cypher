// Count what each namespace holds onto its counter node, where the node has no counts yet (a
// store written before they existed): `requests` (committed requests) and `states`. From then
// on every path that adds or removes keeps them in the statement that does it: the commit
// (remember and import commit too), forgetting a request or a state, retention, and each batch
// of forgetting the whole namespace; a counter node created later counts what is there then.
// The index's start reads them instead of counting the namespace's requests, so it costs the
// same at any size (index_older). Each namespace in its own transaction (IN TRANSACTIONS, so it
// runs in an auto-commit transaction), with its counter write-locked first, as every commit
// locks it: a commit in flight is counted once, before or after. Safe to run again.
MATCH (m:Namespace)
WHERE m.requests IS NULL OR m.states IS NULL
CALL (m) {
  SET m.lock = randomUUID()
  WITH m
  WHERE m.requests IS NULL OR m.states IS NULL
  SET m.requests = COUNT { MATCH (r:Request {namespace: m.namespace}) WHERE r.id IS NOT NULL },
      m.states = COUNT { MATCH (s:State {namespace: m.namespace}) WHERE s.id IS NOT NULL }
} IN TRANSACTIONS OF 1 ROW
