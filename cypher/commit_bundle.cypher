// The commit of one request, in one statement (one round trip). Commits of a namespace are
// serialised by the write lock on its counter node, taken first, so concurrent requests commit
// one after the other, in any order of their seqs. The counter records the commit (`committed`,
// which agents follow to see new requests) and covers the request's seq (never handed out
// again). The request node is linked into the NEXT chain in seq order (between the nearest
// earlier and later requests), then its states (each with its category label), the
// observations they cite, typed state-to-state relations, evidence links, approval decisions
// with a CITES edge to each cited state, and the request's draft dropped. Later parts see what
// earlier ones created. The caller reads the checks and aborts (rolling everything back)
// unless `held` is true, `supersede_conflicts` and every `*_missing` list are empty and every
// count is what it sent; a duplicate id fails the uniqueness constraint.
// $namespace: str; timestamps in the maps are ISO 8601 text, made datetimes here;
// $namespace_term: str, the namespace as the full-text index's one token (search.namespace_term);
// $owner: str or null: the writer that must hold the request's draft (null: an import);
// $request: map of Request properties (usage flattened, no namespace);
// $states: list of {props: map of StateNode properties (no namespace), label: Category.label};
// $observations: list of maps of Observation properties;
// $relations: list of {type: RelationType value, source: str, target: str}; both ends must be
//   states of this namespace, targets that are not come back in `relation_missing`; a
//   SUPERSEDES target that another request's state already supersedes comes back in
//   `supersede_conflicts` (a state is superseded once: the newer state is the one to replace);
// $evidence: list of {state: str, observation: str};
// $decisions: list of maps of ActionDecision properties (`cites` a list of state ids of this
//   request or earlier ones; ids that are not states of this namespace come back in
//   `decision_missing`). The label is not :Decision, the label of the decision category.
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0, m.requests = -1
WITH m
CALL (m) {
  // A counter just created counts what the namespace holds: nothing, unless it was written
  // before counters existed (backfill_namespace_counts.cypher says who keeps the counts).
  WITH m WHERE m.requests = -1
  SET m.requests = COUNT { MATCH (r:Request {namespace: $namespace}) WHERE r.id IS NOT NULL },
      m.states = COUNT { MATCH (s:State {namespace: $namespace}) WHERE s.id IS NOT NULL }
}
SET m.lock = randomUUID()
WITH m
OPTIONAL MATCH (draft:Draft {namespace: $namespace, request_id: $request.id})
WITH m, draft, $owner IS NULL OR coalesce(draft.holder = $owner, false) AS held,
     draft.holder AS holder
SET m.last_seq = CASE WHEN m.last_seq < $request.seq THEN $request.seq ELSE m.last_seq END,
    m.committed = coalesce(m.committed, m.last_seq) + 1,
    // Counted as they are written (null, uncounted, stays null until the upgrade counts it).
    m.requests = m.requests + 1, m.states = m.states + size($states)
WITH m, held, holder
CALL () {
  UNWIND $relations AS row
  WITH row WHERE row.type = 'SUPERSEDES'
  MATCH (:State {namespace: $namespace, id: row.target})<-[:SUPERSEDES]-(newer:State)
  WHERE newer.namespace = $namespace AND newer.request_id <> $request.id
  RETURN collect({target: row.target, by: newer.id}) AS supersede_conflicts
}
CALL () {
  OPTIONAL MATCH (prev:Request {namespace: $namespace})
  WHERE prev.seq < $request.seq
  RETURN prev ORDER BY prev.seq DESC LIMIT 1
}
CALL () {
  OPTIONAL MATCH (next:Request {namespace: $namespace})
  WHERE next.seq > $request.seq
  RETURN next ORDER BY next.seq LIMIT 1
}
CREATE (r:Request)
SET r = $request, r.namespace = $namespace, r.commit_seq = m.committed,
    r.started_at = datetime($request.started_at), r.finished_at = datetime($request.finished_at)
WITH r, prev, next, held, holder, supersede_conflicts
CALL (prev, next) {
  OPTIONAL MATCH (prev)-[link:NEXT]->(next)
  DELETE link
}
FOREACH (p IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (p)-[:NEXT]->(r))
FOREACH (n IN CASE WHEN next IS NULL THEN [] ELSE [next] END | CREATE (r)-[:NEXT]->(n))
WITH r, held, holder, supersede_conflicts
CALL (r) {
  UNWIND $states AS row
  CREATE (s:State)
  SET s = row.props, s.namespace = $namespace, s.namespace_term = $namespace_term,
      s.created_at = datetime(row.props.created_at), s.updated_at = datetime(row.props.updated_at)
  SET s:$(row.label)
  CREATE (r)-[:PRODUCED]->(s)
  RETURN count(s) AS states
}
CALL (r) {
  UNWIND $observations AS props
  CREATE (o:Observation)
  SET o = props, o.namespace = $namespace, o.created_at = datetime(props.created_at)
  CREATE (r)-[:PRODUCED]->(o)
  RETURN count(o) AS observations
}
CALL () {
  UNWIND $relations AS row
  MATCH (a:State {namespace: $namespace, id: row.source})
  OPTIONAL MATCH (b:State {namespace: $namespace, id: row.target})
  CALL (a, b, row) {
    WITH *
    WHERE b IS NOT NULL
    MERGE (a)-[:$(row.type)]->(b)
  }
  RETURN count(b) AS relations, collect(CASE WHEN b IS NULL THEN row.target END) AS relation_missing
}
CALL () {
  UNWIND $evidence AS row
  MATCH (s:State {namespace: $namespace, id: row.state})
  MATCH (o:Observation {namespace: $namespace, id: row.observation})
  MERGE (s)-[:EVIDENCED_BY]->(o)
  RETURN count(*) AS evidence
}
CALL (r) {
  UNWIND $decisions AS props
  CREATE (d:ActionDecision)
  SET d = props, d.namespace = $namespace, d.created_at = datetime(props.created_at)
  CREATE (r)-[:PRODUCED]->(d)
  WITH d
  CALL (d) {
    UNWIND d.cites AS cited
    OPTIONAL MATCH (s:State {namespace: $namespace, id: cited})
    CALL (d, s) {
      WITH *
      WHERE s IS NOT NULL
      MERGE (d)-[:CITES]->(s)
    }
    RETURN collect(CASE WHEN s IS NULL THEN cited END) AS missing
  }
  RETURN count(d) AS decisions, reduce(acc = [], ms IN collect(missing) | acc + ms) AS decision_missing
}
CALL () {
  OPTIONAL MATCH (draft:Draft {namespace: $namespace, request_id: $request.id})
  DETACH DELETE draft
  RETURN count(*) AS dropped
}
RETURN held, holder, supersede_conflicts, states, observations, relations, relation_missing,
       evidence, decisions, decision_missing
