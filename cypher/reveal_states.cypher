// Relation-only reveal: each requested state's full record plus its relations as
// (type, direction, other end's id). The other end's content and summary are never returned.
// Ids that are not states of this namespace are simply absent from the result.
// $namespace: str; $ids: list of state ids; $types: relationship types to show (our enums).
UNWIND $ids AS id
MATCH (s:State {namespace: $namespace, id: id})
CALL (s) {
  OPTIONAL MATCH (s)-[rel]-(other {namespace: $namespace})
  WHERE type(rel) IN $types
  RETURN collect(
    CASE WHEN rel IS NOT NULL THEN
      {
        type: type(rel),
        direction: CASE WHEN startNode(rel) = s THEN 'out' ELSE 'in' END,
        other: other.id
      }
    END
  ) AS relations
}
// Timestamps come back as ISO 8601 text: decoding driver datetimes was most of the client's
// share of a reveal.
RETURN s {.*, created_at: toString(s.created_at), updated_at: toString(s.updated_at)} AS state,
       relations
