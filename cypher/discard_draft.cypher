// Drop a request's draft; also the last step of committing that request.
// $namespace: str; $request_id: str
OPTIONAL MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
DELETE d
RETURN count(d) AS deleted
