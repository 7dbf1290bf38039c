// How many committed requests lie below seq $below, and the first and last of their seqs: the
// index names them with one folded line instead of loading them.
// $namespace: str; $below: int
MATCH (r:Request {namespace: $namespace})
WHERE r.seq < $below
RETURN count(r) AS requests, min(r.seq) AS first, max(r.seq) AS last
