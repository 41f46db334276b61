// One page of a namespace's skill runs for export, oldest first.
// params: $namespace, $skip: int, $limit: int
// returns: r (map)
MATCH (r:SkillRun {namespace: $namespace})
RETURN r {.*} AS r
ORDER BY r.started_at, r.run_id
SKIP $skip LIMIT $limit
