// Upsert the serialized active state of an in-flight request. The payload is opaque JSON.
// $namespace: str; $request_id: str; $payload: str
MERGE (d:Draft {namespace: $namespace, request_id: $request_id})
SET d.payload = $payload, d.updated_at = datetime()
