// FlowState graph schema. Applied at every connect; every statement is idempotent (IF NOT EXISTS).
// This one file holds several statements separated by `;` (the catalog splits it there, after
// dropping `//` comment lines), because Neo4j runs one schema statement per query.
// Each uniqueness constraint also creates the range index that serves lookups by (namespace, id).

CREATE CONSTRAINT flowstate_request_id IF NOT EXISTS
FOR (n:Request) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT flowstate_state_id IF NOT EXISTS
FOR (n:State) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT flowstate_observation_id IF NOT EXISTS
FOR (n:Observation) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT flowstate_action_decision_id IF NOT EXISTS
FOR (n:ActionDecision) REQUIRE (n.namespace, n.id) IS UNIQUE;

CREATE CONSTRAINT flowstate_draft_request IF NOT EXISTS
FOR (n:Draft) REQUIRE (n.namespace, n.request_id) IS UNIQUE;

// The index walks a namespace's requests in order, optionally from a given seq on.
CREATE INDEX flowstate_request_seq IF NOT EXISTS
FOR (n:Request) ON (n.namespace, n.seq);

// Agents follow commits by number (requests may commit out of seq order).
CREATE INDEX flowstate_request_commit IF NOT EXISTS
FOR (n:Request) ON (n.namespace, n.commit_seq);

// A retried one-call request finds the one it repeats (`begin_fact`).
CREATE INDEX flowstate_request_idempotency IF NOT EXISTS
FOR (n:Request) ON (n.namespace, n.idempotency_key);

CREATE INDEX flowstate_state_request IF NOT EXISTS
FOR (n:State) ON (n.namespace, n.request_id);

CREATE INDEX flowstate_observation_request IF NOT EXISTS
FOR (n:Observation) ON (n.namespace, n.request_id);

// Retention expires one category (or the observations) created before a cut-off.
CREATE INDEX flowstate_state_created IF NOT EXISTS
FOR (n:State) ON (n.namespace, n.category, n.created_at);

CREATE INDEX flowstate_observation_created IF NOT EXISTS
FOR (n:Observation) ON (n.namespace, n.created_at);

// One counter node per namespace: request seqs handed out, commits counted, the generation.
CREATE CONSTRAINT flowstate_namespace IF NOT EXISTS
FOR (n:Namespace) REQUIRE n.namespace IS UNIQUE;

// Search over what states say (`memory_search`, `fs.search`, and the index's look for old
// requests that match a request): their summaries and contents, and `namespace_term`, the
// namespace as one token (`flowstate.store.search.namespace_term`), so that a query is narrowed
// to exactly one namespace inside the index. The analyzer is named, not left to the server's
// default, because the term must stay one token. Eventually consistent: a commit does not wait
// for Lucene (a consistent full-text index added 10-20 ms to every commit that wrote a state,
// measured on 5.26); a search waits for the pending updates instead (search_states.cypher), so
// it still sees every commit. `flowstate.store.upgrade` backfills the term in a store written
// before it existed and then drops that store's older index, `flowstate_state_text`.
CREATE FULLTEXT INDEX flowstate_state_search IF NOT EXISTS
FOR (n:State) ON EACH [n.namespace_term, n.summary, n.content]
OPTIONS {indexConfig: {
  `fulltext.analyzer`: 'standard-no-stop-words',
  `fulltext.eventually_consistent`: true
}};
