// The conversation search's best candidates read whole (graph/messages.py MessageStore.hits_of),
// in the order asked, with the topics each message is MENTIONED_IN (ordered by name, then id:
// the store's own order of a node's relationships follows where its records were allocated,
// which other tenants' writes and deletes move, and a context breaks ties between equally
// scored topics in this order, docs/security.md); ids not in the namespace are left out.
// params: $namespace, $message_ids: list<string> (best first)
// returns: hits: list<{m: map, topics: list<{topic_id, name}> by name}> in the order of $message_ids;
//          the message's times as ISO text (graph/mapping.py parses them: no driver temporal
//          decoding)
UNWIND range(0, size($message_ids) - 1) AS i
MATCH (m:Message {message_id: $message_ids[i], namespace: $namespace})
WITH i, m ORDER BY i
RETURN collect({m: m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)},
                topics: COLLECT {
                  MATCH (t:Topic)-[:MENTIONED_IN]->(m) WHERE t.archived_at IS NULL
                  WITH t ORDER BY t.name, t.topic_id
                  RETURN {topic_id: t.topic_id, name: t.name}
                }}) AS hits
