// Give every state without `namespace_term` its namespace's term, in batches (IN TRANSACTIONS,
// so it runs in an auto-commit transaction and a store of any size fits in the transaction
// memory limit). Safe to run again: a state that has its term is left alone.
// $terms: map of namespace -> its term (flowstate.store.search.namespace_term)
MATCH (s:State)
WHERE s.namespace_term IS NULL AND s.namespace IN keys($terms)
CALL (s) {
  SET s.namespace_term = $terms[s.namespace]
} IN TRANSACTIONS OF 5000 ROWS
