// Messages whose passages are still to be written (marked passages_pending at append or import),
// oldest first, in one namespace or in any.
// params: $namespace: string | null (null: every namespace), $limit: int
// returns: namespace, message_id, role, speaker, content
MATCH (m:Message)
WHERE m.passages_pending = true AND ($namespace IS NULL OR m.namespace = $namespace)
RETURN m.namespace AS namespace, m.message_id AS message_id, m.role AS role,
       m.speaker AS speaker, m.content AS content
ORDER BY m.namespace, m.seq
LIMIT $limit
