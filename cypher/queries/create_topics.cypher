// Create topics in one batch.
// params: $rows: list<{props: map, embedding: list<float> | null}>, $now: datetime
// returns: topic_id
UNWIND $rows AS row
CREATE (t:Topic)
SET t = row.props, t.embedding = row.embedding, t.version = 1, t.created_at = $now,
    t.updated_at = $now
RETURN t.topic_id AS topic_id
