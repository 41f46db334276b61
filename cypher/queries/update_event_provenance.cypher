// Rewrite the provenance (and summary) of topic events after some of their messages were
// forgotten.
// params: $namespace, $rows: list<{event_id, source_message_ids: list<string>, delta_summary}>
// returns: updated (count)
UNWIND $rows AS row
MATCH (e:TopicEvent {event_id: row.event_id, namespace: $namespace})
SET e.source_message_ids = row.source_message_ids, e.delta_summary = row.delta_summary
RETURN count(*) AS updated
