// A sleep's topic events (idempotent: MERGE on event_id), attached to their topics, and the
// topics' provenance links to the messages each event came from, (:Topic)-[:MENTIONED_IN]->
// (:Message): create_events and link_topic_messages in one statement (one round trip).
// A row with topic_vector = true takes its topic's embedding (a sleep's event of a topic it
// just created has the very same vector, so it is not sent twice).
// params: $namespace, $rows: list<{props: map (source_message_ids: list<string>),
//         embedding: list<float> | null, topic_vector: bool}>
// returns: event_id
UNWIND $rows AS row
MATCH (t:Topic {topic_id: row.props.topic_id, namespace: $namespace})
MERGE (e:TopicEvent {event_id: row.props.event_id})
ON CREATE SET e = row.props,
              e.embedding = CASE WHEN row.topic_vector THEN t.embedding ELSE row.embedding END
MERGE (t)-[:HAS_EVENT]->(e)
WITH t, e, row
CALL (t, row) {
  UNWIND row.props.source_message_ids AS mid
  MATCH (m:Message {message_id: mid, namespace: $namespace})
  MERGE (t)-[:MENTIONED_IN]->(m)
}
RETURN e.event_id AS event_id
