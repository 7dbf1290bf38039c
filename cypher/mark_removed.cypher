// Before states are forgotten or expired, in the transaction of the deletion: a state that
// stays and that a removed one SUPERSEDES keeps the removed state's id (never its content) and
// how it went (`superseded_by_removed`, `superseder_removed`), so it stays superseded: an
// outdated fact never reads as current again. States that stay and DERIVED_FROM, DEPENDS_ON,
// REFINES or CONTRADICTS a removed one lose that relation with it; they are reported, for the
// caller to say, and nothing of them is kept.
// $namespace: str; $ids: list of state ids removed; $request_id: str or null (its states are
// removed too); $how: 'forgotten' or 'expired'.
CALL () {
  MATCH (d:State {namespace: $namespace})
  WHERE d.id IN $ids
  RETURN d
  UNION
  MATCH (:Request {namespace: $namespace, id: $request_id})-[:PRODUCED]->(d:State)
  RETURN d
}
WITH collect(d) AS gone
WITH gone, [d IN gone | d.id] AS gone_ids
CALL (gone, gone_ids) {
  UNWIND gone AS d
  MATCH (d)-[:SUPERSEDES]->(s:State {namespace: $namespace})
  WHERE NOT s.id IN gone_ids
  WITH s, d ORDER BY d.created_at DESC, d.id DESC
  WITH s, collect(d.id)[0] AS by
  SET s.superseded_by_removed = by, s.superseder_removed = $how
  RETURN collect({state: s.id, by: by}) AS superseded
}
CALL (gone, gone_ids) {
  UNWIND gone AS d
  MATCH (s:State {namespace: $namespace})-[rel:DERIVED_FROM|DEPENDS_ON|REFINES|CONTRADICTS]->(d)
  WHERE NOT s.id IN gone_ids
  WITH s, collect({type: type(rel), target: d.id}) AS links
  RETURN collect({state: s.id, links: links}) AS dependents
}
RETURN gone_ids AS ids, superseded, dependents
