// The id a caller knows each message by (its external id when it has one, else the message
// id), for citing: a context cites many messages and needs nothing else of them, so this reads
// two properties instead of whole messages (no content, no datetimes to decode).
// params: $namespace, $message_ids: list<string>
// returns: message_id, source_id (ids not in the namespace are left out)
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
RETURN m.message_id AS message_id, coalesce(m.external_id, m.message_id) AS source_id
