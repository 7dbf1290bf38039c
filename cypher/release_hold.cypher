// $owner stops driving a request it holds without ending it: its hold lapses now, so another
// writer may resume or discard the request at once. The holder's name stays, to say who ran it.
// $namespace: str; $request_id: str; $owner: str
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
WHERE d.holder = $owner
SET d.hold_expires = datetime()
RETURN count(d) AS released
