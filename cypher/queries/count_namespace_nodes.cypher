// How many nodes of each label a namespace holds (API keys left out).
// params: $namespace
// returns: label, n
MATCH (n) WHERE n.namespace = $namespace AND NOT n:ApiKey
RETURN labels(n)[0] AS label, count(*) AS n
ORDER BY label
