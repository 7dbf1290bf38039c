// How many counter nodes have no counts yet (written before they existed): the upgrade counts
// them (backfill_namespace_counts). Reads one node per namespace.
MATCH (m:Namespace)
WHERE m.requests IS NULL OR m.states IS NULL
RETURN count(m) AS uncounted
