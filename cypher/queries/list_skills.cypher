// The skills of a namespace, by id.
// params: $namespace, $include_retired: bool
// returns: s (map, no embedding)
MATCH (s:Skill {namespace: $namespace})
WHERE $include_retired OR s.retired_at IS NULL
RETURN s {.*, embedding: null} AS s
ORDER BY s.skill_id
