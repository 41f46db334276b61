// Hard-delete topic events by id.
// params: $namespace, $event_ids: list<string>
// returns: deleted (count)
UNWIND $event_ids AS id
MATCH (e:TopicEvent {event_id: id, namespace: $namespace})
DETACH DELETE e
RETURN count(*) AS deleted
