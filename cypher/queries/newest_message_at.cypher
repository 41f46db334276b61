// The time of the latest stored message of a namespace (no row when it has none); the
// (namespace, at) index serves the ORDER BY ... LIMIT 1.
// params: $namespace   returns: at (datetime)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
MATCH (m:Message {namespace: $namespace})
USING INDEX m:Message(namespace, at)
WHERE m.at IS NOT NULL
WITH m ORDER BY m.namespace DESC, m.at DESC LIMIT 1  // the index's order, read backwards
RETURN m.at AS at
