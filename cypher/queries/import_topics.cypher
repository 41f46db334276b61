// Import new topics with their stored version and vector (create only; the caller merges
// existing ones through update_topics.cypher).
// params: $namespace, $rows: list<{props: map, embedding: list<float> | null, version: int}>,
//         $now: datetime
// returns: topic_id
// moves the namespace's TopicStamp first (graph/topic_vectors.py: a worker's copy of the
// namespace's topic vectors serves no search after this write)
CALL () {
  MERGE (stamp:TopicStamp {namespace: $namespace}) SET stamp.epoch = randomUUID()
}
UNWIND $rows AS row
MERGE (t:Topic {topic_id: row.props.topic_id})
ON CREATE SET t = row.props, t.namespace = $namespace, t.embedding = row.embedding,
              t.version = row.version, t.created_at = $now, t.updated_at = $now
RETURN t.topic_id AS topic_id
