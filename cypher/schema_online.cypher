// The names of FlowState's indexes (and of the indexes behind its constraints) that exist and
// are ONLINE: when every name schema.cypher creates is among them, applying it would change
// nothing. A catalog lookup, cheap at any store size.
SHOW INDEXES YIELD name, state
WHERE name STARTS WITH 'flowstate_' AND state = 'ONLINE'
RETURN collect(name) AS online
