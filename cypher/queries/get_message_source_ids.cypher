// The id a caller knows each message by (its external id when it has one, else the message
// id), for citing: a context cites many messages and needs nothing else of them, so this reads
// two properties instead of whole messages (no content, no datetimes to decode).
// params: $namespace, $message_ids: list<string>
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md):
//          sources: list<[message_id, source_id]> (ids not in the namespace are left out)
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
RETURN collect([m.message_id, coalesce(m.external_id, m.message_id)]) AS sources
