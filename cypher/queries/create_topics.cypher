// Create topics in one batch.
// params: $rows: list<{props: map, embedding: list<float> | null}>, $now: datetime
// returns: topic_id
// moves the TopicStamp of every namespace written first (graph/topic_vectors.py: a worker's
// copy of a namespace's topic vectors serves no search after this write)
CALL () {
  UNWIND $rows AS stamped
  WITH DISTINCT stamped.props.namespace AS ns ORDER BY ns
  MERGE (stamp:TopicStamp {namespace: ns}) SET stamp.epoch = randomUUID()
}
UNWIND $rows AS row
CREATE (t:Topic)
SET t = row.props, t.embedding = row.embedding, t.version = 1, t.created_at = $now,
    t.updated_at = $now
RETURN t.topic_id AS topic_id
