// Skills of a namespace sharing tags with $tags, most shared tags first.
// params: $namespace, $tags: list<string> (lower-case), $k: int
// returns: s (map, no embedding), tag_hits (int), matched (list<string>)
// The skill maps carry the fields graph/skills.py's skill_from_props reads, no more: with .* the
// driver decoded every skill's created/updated times in pure Python (~5 ms of the API's CPU per
// context request, docs/performance.md).
MATCH (s:Skill {namespace: $namespace})
WHERE s.retired_at IS NULL
WITH s, [t IN coalesce(s.tags, []) WHERE t IN $tags] AS matched
WHERE size(matched) > 0
RETURN s {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
       .default_reasoning_effort, .examples, .manifest_json} AS s,
       size(matched) AS tag_hits, matched
ORDER BY tag_hits DESC, s.skill_id
LIMIT $k
