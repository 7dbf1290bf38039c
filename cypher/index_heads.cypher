// The Historical State Index without its state lines: each committed request's id, seq, summary
// and number of states, in seq order. The engine loads state lines only for the newest requests
// that can be listed within the index budget; older ones are shown collapsed anyway.
// States are counted through the (namespace, request_id) index, not by expanding PRODUCED
// (which also reaches observations) and reading each end node: a quarter of the db hits.
// $namespace: str
MATCH (r:Request {namespace: $namespace})
WHERE r.id IS NOT NULL
RETURN r.id AS id, r.seq AS seq, r.summary AS summary,
       COUNT { MATCH (s:State {namespace: $namespace, request_id: r.id}) } AS state_count
ORDER BY r.seq
