// The buffer: messages not yet compacted by a sleep, oldest first.
// params: $namespace, $limit: int   returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE m.compacted_at IS NULL
RETURN m {.*} AS m ORDER BY m.seq LIMIT $limit
