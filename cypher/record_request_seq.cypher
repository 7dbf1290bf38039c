// Commit step 0: make sure the namespace's counter covers this request's seq (it already does
// for a seq the counter handed out; an import or a commit of a hand-made bundle may go past
// it), so the id is never handed out again, even after the request is forgotten.
// $namespace: str; $seq: int
MERGE (m:Namespace {namespace: $namespace})
ON CREATE SET m.epoch = randomUUID(), m.generation = 0, m.last_seq = 0
WITH m
WHERE m.last_seq < $seq
SET m.last_seq = $seq
