// The committed requests below seq $below, which the index names with one folded line instead
// of loading them: how many (the namespace's count of requests, kept on its counter node, less
// those from $below on, which the index has loaded), and the first and last of their seqs (each
// one entry of the (namespace, seq) index, read in its order). It reads the same at any
// namespace size. `counted` is null when the counter has no counts (the caller then counts the
// older requests, count_older_requests).
// $namespace: str; $below: int
OPTIONAL MATCH (m:Namespace {namespace: $namespace})
CALL () {
  OPTIONAL MATCH (r:Request)
  WHERE r.namespace = $namespace AND r.seq < $below
  WITH r
  ORDER BY r.namespace, r.seq
  LIMIT 1
  RETURN r.seq AS first
}
CALL () {
  OPTIONAL MATCH (r:Request)
  WHERE r.namespace = $namespace AND r.seq < $below
  WITH r
  ORDER BY r.namespace DESC, r.seq DESC
  LIMIT 1
  RETURN r.seq AS last
}
RETURN m.requests AS counted,
       COUNT { MATCH (r:Request {namespace: $namespace}) WHERE r.seq >= $below } AS newer,
       first, last
