// Commit step 4: typed state-to-state relations. Both ends must be states of this namespace;
// targets that are not are returned as `missing` and the caller aborts the whole commit.
// $namespace: str; $relations: list of {type: RelationType value, source: str, target: str}.
UNWIND $relations AS row
MATCH (a:State {namespace: $namespace, id: row.source})
OPTIONAL MATCH (b:State {namespace: $namespace, id: row.target})
CALL (a, b, row) {
  WITH *
  WHERE b IS NOT NULL
  MERGE (a)-[:$(row.type)]->(b)
}
RETURN count(b) AS created, collect(CASE WHEN b IS NULL THEN row.target END) AS missing
