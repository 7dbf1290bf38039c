// The namespaces that have states without `namespace_term` (written before it existed, or by an
// older FlowState since): the upgrade gives each its term. Reads every state once; it runs only
// while the older full-text index is still there (legacy_search_index).
MATCH (s:State)
WHERE s.namespace_term IS NULL AND s.namespace IS NOT NULL
RETURN DISTINCT s.namespace AS namespace
