// The last $n messages of the conversation (compacted or not), oldest first.
// Ordered by (namespace, seq) descending, the (namespace, seq) index's own order read backwards,
// so the planner stops after $n index entries; ordered by seq alone it read every message of the
// namespace and sorted them (30,061 database hits for 30k messages, against 67; docs/performance.md).
// params: $namespace, $n: int   returns: m (map)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
MATCH (m:Message)
USING INDEX m:Message(namespace, seq)
WHERE m.namespace = $namespace AND m.seq IS NOT NULL
WITH m ORDER BY m.namespace DESC, m.seq DESC LIMIT $n
RETURN m {.*} AS m ORDER BY m.seq
