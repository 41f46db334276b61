// Skills of a namespace sharing tags with $tags, most shared tags first.
// params: $namespace, $tags: list<string> (lower-case), $k: int
// returns: s (map, no embedding), tag_hits (int), matched (list<string>)
MATCH (s:Skill {namespace: $namespace})
WHERE s.retired_at IS NULL
WITH s, [t IN coalesce(s.tags, []) WHERE t IN $tags] AS matched
WHERE size(matched) > 0
RETURN s {.*, embedding: null} AS s, size(matched) AS tag_hits, matched
ORDER BY tag_hits DESC, s.skill_id
LIMIT $k
