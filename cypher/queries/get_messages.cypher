// Messages by id within a namespace, oldest first.
// params: $namespace, $message_ids   returns: m (map)
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
RETURN m {.*} AS m ORDER BY m.seq
