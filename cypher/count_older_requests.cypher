// How many committed requests lie below seq $below, counted one by one: for a namespace whose
// counter node has no counts (index_older found none), so it reads every older request.
// $namespace: str; $below: int
MATCH (r:Request {namespace: $namespace})
WHERE r.seq < $below
RETURN count(r) AS requests
