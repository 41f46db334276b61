// The namespace's most recent wake packets, newest first.
// params: $namespace, $limit   returns: w (map)
MATCH (w:WakePacket {namespace: $namespace})
RETURN w {.*} AS w ORDER BY w.slept_at DESC LIMIT $limit
