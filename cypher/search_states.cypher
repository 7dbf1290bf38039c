// States of one namespace whose summary or content match a full-text query, best first, each
// with the state that superseded it (if any). $query is built by FlowState from the words of
// the user's text (letters and digits only, so no user text is Lucene syntax) and requires the
// namespace's own term (`namespace_term`, one token no other namespace has), so every hit
// Lucene returns is of this namespace; the WHERE is what enforces the namespace.
// $namespace: str; $query: str; $limit: int
// The index is eventually consistent (schema.cypher): wait for the updates of commits that
// landed before this query, so that a state committed a moment ago is found.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
WITH 1 AS ready
CALL db.index.fulltext.queryNodes('flowstate_state_search', $query, {limit: $limit})
YIELD node, score
WITH node AS s, score
WHERE s.namespace = $namespace AND s.id IS NOT NULL
CALL (s) {
  OPTIONAL MATCH (newer:State {namespace: $namespace})-[:SUPERSEDES]->(s)
  RETURN min(newer.id) AS superseded_by
}
// A superseder forgotten or expired since is kept by id on the state (mark_removed).
RETURN s.id AS id, s.request_id AS request_id, s.category AS category, s.summary AS summary,
       coalesce(superseded_by, s.superseded_by_removed) AS superseded_by,
       CASE WHEN superseded_by IS NULL THEN s.superseder_removed END AS superseder_removed,
       score
ORDER BY score DESC, id
LIMIT $limit
