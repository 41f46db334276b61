// The last $n messages of the conversation (compacted or not), oldest first.
// params: $namespace, $n: int   returns: m (map)
MATCH (m:Message {namespace: $namespace})
WITH m ORDER BY m.seq DESC LIMIT $n
RETURN m {.*} AS m ORDER BY m.seq
