// A namespace's live topics with their vectors and the times the windowed search filters on
// (graph/topic_vectors.py: a worker's copy, read after read_topic_stamp.cypher).
// params: $namespace
// returns: topic_id, first_us, last_us (microseconds since the epoch), embedding
CYPHER 25
MATCH (t:Topic)
WHERE t.namespace = $namespace AND t.embedding IS NOT NULL AND t.archived_at IS NULL
  AND t.first_seen_at IS NOT NULL AND t.last_seen_at IS NOT NULL
RETURN t.topic_id AS topic_id,
       t.first_seen_at.epochSeconds * 1000000 + t.first_seen_at.microsecond AS first_us,
       t.last_seen_at.epochSeconds * 1000000 + t.last_seen_at.microsecond AS last_us,
       t.embedding AS embedding
