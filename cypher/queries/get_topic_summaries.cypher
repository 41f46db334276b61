// Topics by id without their heavy JSON lists (what a context needs to title and date them),
// with the message ids the one-liner came from; the topics in $full_ids come whole (facts,
// numbers, open loops, events; the four topic times as ISO text), so a context reads its
// candidates in one round trip. The others carry only the fields topic_from_props reads (no
// created/updated times, lower-cased or full-text copies, facts list or vector; times as ISO
// text, parsed by graph/mapping.py: no driver temporal decoding).
// params: $namespace, $topic_ids, $full_ids (a subset of $topic_ids, may be empty)
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md):
//          topics: list<{t: map, one_liner_sources: list<string>}> in the order asked
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
WITH t, id IN $full_ids AS whole
RETURN collect({t: CASE WHEN whole
    THEN t {.*, embedding: null, first_seen_at: toString(t.first_seen_at),
            last_seen_at: toString(t.last_seen_at), last_used_at: toString(t.last_used_at),
            archived_at: toString(t.archived_at)}
  ELSE t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
          first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
          .skill_refs, .artifact_refs, .embedding_model, .embedding_hash, .embedding_dimensions,
          .utility_score, .decay_bucket, .touch_count, .correction_count, .constraint_count,
          .usage_count, last_used_at: toString(t.last_used_at), .version,
          archived_at: toString(t.archived_at)} END,
  one_liner_sources: coalesce(t.one_liner_source_ids, [])}) AS topics
