// What a retention policy would expire now, without deleting anything: per kind, how many
// states of that category (or observations) were created before its cut-off.
// $namespace: str; $cutoffs: list of {kind: Category value or 'observation', before: datetime}.
UNWIND $cutoffs AS c
CALL (c) {
  MATCH (s:State {namespace: $namespace})
  WHERE c.kind <> 'observation' AND s.category = c.kind AND s.created_at < c.before
  RETURN count(s) AS n
  UNION ALL
  MATCH (o:Observation {namespace: $namespace})
  WHERE c.kind = 'observation' AND o.created_at < c.before
  RETURN count(o) AS n
}
RETURN c.kind AS kind, sum(n) AS records
