// Recent skill runs of a namespace, newest first, optionally for one skill.
// params: $namespace, $skill_id: string | null, $limit: int
// returns: r (map)
MATCH (r:SkillRun {namespace: $namespace})
WHERE $skill_id IS NULL OR r.skill_id = $skill_id
RETURN r {.*} AS r
ORDER BY r.started_at DESC
LIMIT $limit
