// What the sleep policy needs of the buffer, without shipping its messages: how many, their
// token estimate, and the time of the newest one (null when the buffer is empty).
// params: $namespace   returns: messages, tokens, last_at
MATCH (m:Message {namespace: $namespace})
WHERE m.seq IS NOT NULL AND m.compacted_at IS NULL
WITH m ORDER BY m.seq
RETURN count(m) AS messages, coalesce(sum(m.token_estimate), 0) AS tokens,
       last(collect(m.at)) AS last_at
