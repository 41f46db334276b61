// Compare-and-set update: writes only if the stored version is still $expected_version.
// Writing a lock property first takes the node's write lock, so the version test below reads
// the latest committed version (read-committed isolation) and concurrent writers serialise.
// params: $namespace, $topic_id, $expected_version: int, $props: map,
//         $embedding: list<float> | null (null keeps the stored vector), $now: datetime
// returns: version (the new version), or no row when the topic is missing or the version moved
// moves the namespace's TopicStamp first (graph/topic_vectors.py: a worker's copy of the
// namespace's topic vectors serves no search after this write)
CALL () {
  MERGE (stamp:TopicStamp {namespace: $namespace}) SET stamp.epoch = randomUUID()
}
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})
SET t._lock = true
REMOVE t._lock
WITH t
WHERE t.version = $expected_version
SET t += $props, t.version = $expected_version + 1, t.updated_at = $now
FOREACH (_ IN CASE WHEN $embedding IS NULL THEN [] ELSE [1] END |
  SET t.embedding = $embedding)
RETURN t.version AS version
