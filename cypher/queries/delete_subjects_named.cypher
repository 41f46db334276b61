// Delete the ephemeral subjects whose label names a forgotten topic (lower-cased labels).
// params: $namespace, $labels: list<string>
// returns: deleted (count)
MATCH (s:Subject {namespace: $namespace})
WHERE toLower(s.label) IN $labels
DETACH DELETE s
RETURN count(*) AS deleted
