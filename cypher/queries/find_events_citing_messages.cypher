// Topic events whose provenance names any of some messages.
// params: $namespace, $message_ids: list<string>
// returns: e (map, no embedding)
MATCH (e:TopicEvent {namespace: $namespace})
WHERE any(id IN coalesce(e.source_message_ids, []) WHERE id IN $message_ids)
RETURN e {.*, embedding: null} AS e
ORDER BY e.at, e.event_id
