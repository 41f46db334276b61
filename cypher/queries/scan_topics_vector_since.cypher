// Exact vector search among the topics last seen since $since (and first seen before $until,
// when given): a range seek on the (namespace, last_seen_at) index bounds the scan to the window,
// which is cheaper and exact where over-fetching the vector index would mostly miss.
// params: $vector, $k, $namespace, $since (datetime), $until (datetime | null), $light
// returns: t (map, no embedding), score ((1 + cos) / 2, as the index)
MATCH (t:Topic)
WHERE t.namespace = $namespace AND t.last_seen_at >= $since
  AND t.archived_at IS NULL AND t.embedding IS NOT NULL
  AND ($until IS NULL OR t.first_seen_at < $until)
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN t {.*, embedding: null,
          facts: CASE WHEN $light THEN null ELSE t.facts END,
          facts_json: CASE WHEN $light THEN null ELSE t.facts_json END,
          notable_events_json: CASE WHEN $light THEN null ELSE t.notable_events_json END} AS t,
       score
