// Exact vector search over the skills of one namespace (fallback when over-fetching the index
// was not enough). Scores match the index: (1 + cos) / 2.
// params: $vector, $k, $namespace
// returns: s (map, no embedding), score
// The skill maps carry the fields graph/skills.py's skill_from_props reads, no more: with .* the
// driver decoded every skill's created/updated times in pure Python (~5 ms of the API's CPU per
// context request, docs/performance.md).
MATCH (s:Skill {namespace: $namespace})
WHERE s.embedding IS NOT NULL AND s.retired_at IS NULL
WITH s, vector.similarity.cosine(s.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN s {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
       .default_reasoning_effort, .examples, .manifest_json} AS s, score
