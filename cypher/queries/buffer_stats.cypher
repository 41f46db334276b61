// What the sleep policy needs of the buffer, without shipping its messages: how many, their
// token estimate, and the time of the newest one (null when the buffer is empty).
// params: $namespace   returns: messages, tokens, last_at
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
MATCH (m:Message {namespace: $namespace})
USING INDEX m:Message(namespace, seq)
WHERE m.seq IS NOT NULL AND m.compacted_at IS NULL
WITH m ORDER BY m.seq
RETURN count(m) AS messages, coalesce(sum(m.token_estimate), 0) AS tokens,
       last(collect(m.at)) AS last_at
