// Delete the ephemeral subjects whose label (comma-separated topic keys, "kitchen, rosa")
// names a forgotten topic.
// params: $namespace, $labels: list<string> (normalised topic keys)
// returns: deleted (count)
MATCH (s:Subject {namespace: $namespace})
WHERE any(part IN split(toLower(s.label), ', ') WHERE part IN $labels)
DETACH DELETE s
RETURN count(*) AS deleted
