// The namespace's most recent wake packets, newest first.
// params: $namespace, $limit   returns: w (map)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few wake packets,
// takes the (namespace) index and sorts the namespace's packets (docs/performance.md, "The neighbourhood").
MATCH (w:WakePacket {namespace: $namespace})
USING INDEX w:WakePacket(namespace, slept_at)
WHERE w.slept_at IS NOT NULL  // always true; lets the (namespace, slept_at) index answer
RETURN w {.*} AS w ORDER BY w.slept_at DESC LIMIT $limit
