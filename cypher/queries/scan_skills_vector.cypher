// Exact vector search over the skills of one namespace (fallback when over-fetching the index
// was not enough). Scores match the index: (1 + cos) / 2.
// params: $vector, $k, $namespace
// returns: s (map, no embedding), score
MATCH (s:Skill {namespace: $namespace})
WHERE s.embedding IS NOT NULL AND s.retired_at IS NULL
WITH s, vector.similarity.cosine(s.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN s {.*, embedding: null} AS s, score
