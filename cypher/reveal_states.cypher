// Relation-only reveal: each requested state's full record plus its relations as
// "TYPE direction other-id" lines (direction `out` or `in`). The other end's content and
// summary are never returned. Ids that are not states of this namespace are simply absent.
// A relation is one string, not a map, and the state's fields are named, not `.*`: the reveal is
// on a step's critical path, and unpacking and checking each returned value is most of its cost
// in the client. Relation types and state ids hold no spaces (our enums; the id pattern).
// $namespace: str; $ids: list of state ids; $types: relationship types to show (our enums).
UNWIND $ids AS id
MATCH (s:State {namespace: $namespace, id: id})
CALL (s) {
  OPTIONAL MATCH (s)-[rel]-(other {namespace: $namespace})
  WHERE type(rel) IN $types
  RETURN collect(
    type(rel) + CASE WHEN startNode(rel) = s THEN ' out ' ELSE ' in ' END + other.id
  ) AS relations
}
// Timestamps come back as ISO 8601 text: decoding driver datetimes was most of the client's
// share of a reveal.
RETURN s {.id, .request_id, .key, .category, .summary, .content, .superseded_by_removed,
          .superseder_removed, namespace: $namespace, created_at: toString(s.created_at),
          updated_at: toString(s.updated_at)} AS state,
       relations
