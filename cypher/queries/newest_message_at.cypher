// The time of the latest stored message of a namespace (no row when it has none); the
// (namespace, at) index serves the ORDER BY ... LIMIT 1.
// params: $namespace   returns: at (datetime)
MATCH (m:Message {namespace: $namespace})
WHERE m.at IS NOT NULL
RETURN m.at AS at ORDER BY m.at DESC LIMIT 1
