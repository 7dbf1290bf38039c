// Retention, first step: the ids of the namespace's states of one category created before a
// cut-off (mark_removed then keeps what they meant to the states that stay, expire_states
// deletes them, all in one transaction).
// $namespace: str; $category: Category value; $before: zoned datetime (a naive one would
// compare as null and match nothing; the repository refuses it).
MATCH (s:State {namespace: $namespace})
WHERE s.category = $category AND s.created_at < $before
RETURN collect(s.id) AS ids
