// The buffer: messages not yet compacted by a sleep, oldest first.
// (`seq IS NOT NULL` lets the planner seek the (namespace, seq) index instead of scanning every
// Message of every namespace.)
// params: $namespace, $limit: int   returns: m (map)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
MATCH (m:Message {namespace: $namespace})
USING INDEX m:Message(namespace, seq)
WHERE m.seq IS NOT NULL AND m.compacted_at IS NULL
RETURN m {.*} AS m ORDER BY m.seq LIMIT $limit
