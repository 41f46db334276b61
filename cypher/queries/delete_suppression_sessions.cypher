// Delete every suppression session of a namespace (the namespace was forgotten whole).
// params: $namespace
// returns: sessions: int (sessions deleted)
MATCH (s:SuppressionSession {namespace: $namespace})
DELETE s
RETURN count(s) AS sessions
