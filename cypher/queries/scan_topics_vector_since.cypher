// Exact vector search among the topics last seen since $since (and first seen before $until,
// when given): a range seek on the (namespace, last_seen_at) index bounds the scan to the window,
// which is cheaper and exact where over-fetching the vector index would mostly miss.
// params: $vector, $k, $namespace, $since (datetime), $until (datetime | null), $light
// $light: true reads only the fields a search result shows (those topic_from_props reads,
// without facts and events; not the lower-cased and full-text copies, created/updated times or
// the vector; times as ISO text, parsed by graph/mapping.py: no driver temporal decoding,
// docs/performance.md); false: the whole topic.
// returns: t (map, no embedding), score ((1 + cos) / 2, as the index)
MATCH (t:Topic)
WHERE t.namespace = $namespace AND t.last_seen_at >= $since
  AND t.archived_at IS NULL AND t.embedding IS NOT NULL
  AND ($until IS NULL OR t.first_seen_at < $until)
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k
RETURN CASE WHEN $light
  THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
          first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
          .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
          .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket, .touch_count,
          .correction_count, .constraint_count, .usage_count,
          last_used_at: toString(t.last_used_at), .version, archived_at: toString(t.archived_at)}
  ELSE t {.*, embedding: null} END AS t,
       score
