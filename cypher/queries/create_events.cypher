// Record topic events idempotently (MERGE on event_id) and attach them to their topic.
// A row with topic_vector = true takes its topic's embedding (a sleep's event of a topic it
// just created has the very same vector, so it is not sent twice).
// params: $namespace, $rows: list<{props: map, embedding: list<float> | null,
//         topic_vector: bool (optional)}>
// returns: event_id
UNWIND $rows AS row
MATCH (t:Topic {topic_id: row.props.topic_id, namespace: $namespace})
MERGE (e:TopicEvent {event_id: row.props.event_id})
ON CREATE SET e = row.props,
              e.embedding = CASE WHEN row.topic_vector THEN t.embedding ELSE row.embedding END
MERGE (t)-[:HAS_EVENT]->(e)
RETURN e.event_id AS event_id
