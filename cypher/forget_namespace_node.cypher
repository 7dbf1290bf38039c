// The last step of forgetting a whole namespace: its counter node (ids handed out, stamp,
// commits counted). Apart from the batched deletion so that the counts reported are of memory only.
// $namespace: str
MATCH (m:Namespace {namespace: $namespace})
DETACH DELETE m
