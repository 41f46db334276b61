// The last $n messages of the conversation (compacted or not), oldest first.
// (`seq IS NOT NULL` lets the planner seek the (namespace, seq) index.)
// params: $namespace, $n: int   returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE m.seq IS NOT NULL
WITH m ORDER BY m.seq DESC LIMIT $n
RETURN m {.*} AS m ORDER BY m.seq
