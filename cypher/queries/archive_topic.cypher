// Soft archive: the topic stays in the graph but leaves search results. Never a hard delete.
// params: $namespace, $topic_id, $now   returns: version
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})
SET t.archived_at = coalesce(t.archived_at, $now), t.version = t.version + 1, t.updated_at = $now
RETURN t.version AS version
