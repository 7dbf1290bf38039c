// Retention: delete the namespace's observations created before a cut-off, with all their
// relationships (the PRODUCED edge and the EVIDENCED_BY edges of the states citing them).
// $namespace: str; $before: zoned datetime.
MATCH (o:Observation {namespace: $namespace})
WHERE o.created_at < $before
DETACH DELETE o
RETURN count(*) AS expired
