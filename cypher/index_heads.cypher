// The Historical State Index without its state lines: each committed request's id, seq, summary
// and number of states, in seq order. The engine loads state lines only for the newest requests
// that can be listed within the index budget; older ones are shown collapsed anyway.
// $namespace: str
MATCH (r:Request {namespace: $namespace})
WHERE r.id IS NOT NULL
RETURN r.id AS id, r.seq AS seq, r.summary AS summary,
       COUNT { (r)-[:PRODUCED]->(:State {namespace: $namespace}) } AS state_count
ORDER BY r.seq
