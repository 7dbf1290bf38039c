// Replace a draft's payload with its scrubbed form, whoever holds it: in the transaction that
// forgets or expires what the payload had copied. Its hold and timestamps stay as they are.
// $namespace: str; $request_id: str; $payload: str
MATCH (d:Draft {namespace: $namespace, request_id: $request_id})
SET d.payload = $payload
