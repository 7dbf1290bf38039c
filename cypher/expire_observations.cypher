// Retention: delete the namespace's observations created before a cut-off, with all their
// relationships (the PRODUCED edge and the EVIDENCED_BY edges of the states citing them).
// Returns the expired ids (the caller scrubs them from drafts).
// $namespace: str; $before: zoned datetime.
MATCH (o:Observation {namespace: $namespace})
WHERE o.created_at < $before
WITH collect(o) AS expired, collect(o.id) AS expired_ids
FOREACH (o IN expired | DETACH DELETE o)
RETURN expired_ids AS ids
