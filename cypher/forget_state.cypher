// Forget one state and all its relationships (its observations stay with the request).
// $namespace: str; $id: str
MATCH (s:State {namespace: $namespace, id: $id})
DETACH DELETE s
RETURN count(*) AS forgotten
