// Whether the store still has the full-text index of FlowState versions before `namespace_term`
// (it indexed the namespace's text, which other namespaces' names could match): its presence
// says the store needs `flowstate.store.upgrade`. A catalog lookup, cheap at any store size.
SHOW FULLTEXT INDEXES YIELD name
WHERE name = 'flowstate_state_text'
RETURN count(*) AS found
