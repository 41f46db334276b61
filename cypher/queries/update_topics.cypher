// Compare-and-set update of many topics in one statement: each row is written only if its
// stored version is still row.expected_version (lock first, as in update_topic.cypher).
// params: $namespace, $rows: list<{topic_id, expected_version, props: map,
//         embedding: list<float> | null}>, $now
// returns: topic_id, version (one row per topic actually written)
// moves the namespace's TopicStamp first (graph/topic_vectors.py: a worker's copy of the
// namespace's topic vectors serves no search after this write)
CALL () {
  MERGE (stamp:TopicStamp {namespace: $namespace}) SET stamp.epoch = randomUUID()
}
UNWIND $rows AS row
MATCH (t:Topic {topic_id: row.topic_id, namespace: $namespace})
SET t._lock = true
REMOVE t._lock
WITH t, row
WHERE t.version = row.expected_version
SET t += row.props, t.version = row.expected_version + 1, t.updated_at = $now
FOREACH (_ IN CASE WHEN row.embedding IS NULL THEN [] ELSE [1] END |
  SET t.embedding = row.embedding)
RETURN t.topic_id AS topic_id, t.version AS version
