// How many live topics with an embedding a namespace holds.
// params: $namespace   returns: n
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL AND t.embedding IS NOT NULL
RETURN count(t) AS n
