// The namespace's most recent wake packets, newest first.
// params: $namespace, $limit   returns: w (map)
MATCH (w:WakePacket {namespace: $namespace})
WHERE w.slept_at IS NOT NULL  // always true; lets the (namespace, slept_at) index answer
RETURN w {.*} AS w ORDER BY w.slept_at DESC LIMIT $limit
