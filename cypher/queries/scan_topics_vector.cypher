// Exact vector search inside one namespace (the fallback when over-fetching the index was not
// enough, e.g. a small namespace in a large database). Scores match the index: (1 + cos) / 2.
// params: $vector, $k, $namespace, $since, $until
// $light: true leaves out facts, facts_json and notable_events_json (search results stay small).
// returns: t (map, no embedding), score
MATCH (t:Topic {namespace: $namespace})
WHERE t.embedding IS NOT NULL AND t.archived_at IS NULL
  AND ($since IS NULL OR t.last_seen_at >= $since)
  AND ($until IS NULL OR t.first_seen_at < $until)
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN t {.*, embedding: null, facts: CASE WHEN $light THEN null ELSE t.facts END, facts_json: CASE WHEN $light THEN null ELSE t.facts_json END, notable_events_json: CASE WHEN $light THEN null ELSE t.notable_events_json END} AS t, score
