// Drop the full-text index of FlowState versions before `namespace_term`, once every state has
// its term (flowstate.store.upgrade): its absence marks the upgrade done.
DROP INDEX flowstate_state_text IF EXISTS
