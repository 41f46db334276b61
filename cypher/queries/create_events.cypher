// Record topic events idempotently (MERGE on event_id) and attach them to their topic.
// params: $namespace, $rows: list<{props: map, embedding: list<float> | null}>
// returns: event_id
UNWIND $rows AS row
MATCH (t:Topic {topic_id: row.props.topic_id, namespace: $namespace})
MERGE (e:TopicEvent {event_id: row.props.event_id})
ON CREATE SET e = row.props, e.embedding = row.embedding
MERGE (t)-[:HAS_EVENT]->(e)
RETURN e.event_id AS event_id
