// Soft archive: the topic stays in the graph but leaves search results. Never a hard delete.
// params: $namespace, $topic_id, $now   returns: version
// moves the namespace's TopicStamp first (graph/topic_vectors.py: a worker's copy of the
// namespace's topic vectors serves no search after this write)
CALL () {
  MERGE (stamp:TopicStamp {namespace: $namespace}) SET stamp.epoch = randomUUID()
}
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})
SET t.archived_at = coalesce(t.archived_at, $now), t.version = t.version + 1, t.updated_at = $now
RETURN t.version AS version
