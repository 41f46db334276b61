// Topics of one namespace by id, in the order asked (ids not in the namespace are left out).
// params: $namespace, $topic_ids: list<string>,
//         $light (below)
// $light: true reads only what a search result shows (graph/mapping.py topic_from_props without
// facts, events, the lower-cased and full-text copies, created/updated times or the vector;
// times as ISO text, parsed by graph/mapping.py: fewer bytes, and no driver temporal decoding,
// docs/performance.md); false: the whole topic.
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md): topics: list<map> (no embedding), in the order asked
UNWIND range(0, size($topic_ids) - 1) AS i
MATCH (t:Topic {namespace: $namespace, topic_id: $topic_ids[i]})
WITH i, CASE WHEN $light
  THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
          first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
          .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
          .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket, .touch_count,
          .correction_count, .constraint_count, .usage_count,
          last_used_at: toString(t.last_used_at), .version, archived_at: toString(t.archived_at)}
  ELSE t {.*, embedding: null} END AS t
ORDER BY i
RETURN collect(t) AS topics
