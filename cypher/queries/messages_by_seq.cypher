// A stretch of a namespace's conversation: the messages with $lo <= seq <= $hi, oldest first
// (the inspector shows a message among its neighbours; the (namespace, seq) index seeks it).
// params: $namespace, $lo, $hi   returns: m (map)
MATCH (m:Message)
WHERE m.namespace = $namespace AND m.seq >= $lo AND m.seq <= $hi
RETURN m {.*} AS m ORDER BY m.seq
