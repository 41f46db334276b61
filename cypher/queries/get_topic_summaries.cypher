// Topics by id without their heavy JSON lists (what a context needs to title and date them),
// with the message ids the one-liner came from; the topics in $full_ids come whole (facts,
// numbers, open loops, events: every field topic_from_props reads, the four topic times as ISO
// text; not the created/updated times, lower-cased or full-text copies: `t {.*}` made the
// driver decode two datetimes a topic in pure Python, ~1 ms of a context request's CPU,
// docs/performance.md, tenth pass), so a context reads its candidates in one round trip.
// The others carry the fields topic_from_props reads but facts and events, as a search's
// light read does (no created/updated times, lower-cased or full-text copies, facts list or
// vector; times as ISO text, parsed by graph/mapping.py: no driver temporal decoding), so a
// search hit scored from its full-text row alone gets here the topic a read by id would give
// (retrieval/context.py, docs/performance.md eleventh pass).
// With $cite, each topic also carries the ids to cite its messages by (as
// get_message_source_ids reads them: the external id when there is one): its one-liner's
// sources, and for a whole topic every message it is MENTIONED_IN (its facts', numbers', loops'
// and events' sources are among them), so a context cites without a round trip of its own
// (docs/performance.md, fifth pass); a message id not found there is looked up as before.
// The topics in $brief_ids (reached only through matching messages; none of $full_ids) come as
// briefs, only what a context shows of them: name, one-liner, first and last seen (brief: true;
// ~36 of a light request's ~44 topics, 1.73 -> 1.26 ms a read, docs/performance.md twelfth
// pass); their one-liners' sources are cited as the others' are.
// params: $namespace, $topic_ids, $full_ids (a subset of $topic_ids, may be empty),
//         $brief_ids (a subset of $topic_ids, none of $full_ids, may be empty), $cite: bool
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md):
//          topics: list<{t: map, brief: bool, one_liner_sources: list<string>,
//          cited: list<[message_id, source_id]> (empty without $cite)}> in the order asked
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
WITH t, id IN $full_ids AS whole, id IN $brief_ids AND NOT id IN $full_ids AS brief
WITH t, whole, brief, CASE WHEN $cite THEN COLLECT {
    UNWIND coalesce(t.one_liner_source_ids, []) AS source
    MATCH (m:Message {message_id: source, namespace: $namespace})
    RETURN [m.message_id, coalesce(m.external_id, m.message_id)] AS pair
  UNION
    WITH t, whole
    WHERE whole
    MATCH (t)-[:MENTIONED_IN]->(m:Message)
    WHERE m.namespace = $namespace
    RETURN [m.message_id, coalesce(m.external_id, m.message_id)] AS pair
  } ELSE [] END AS cited
RETURN collect({t: CASE WHEN whole
    THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
            first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
            .facts_json, .numbers_json, .open_loops_json, .notable_events_json,
            .skill_refs, .artifact_refs, .embedding_model, .embedding_hash,
            .embedding_dimensions, .utility_score, .decay_bucket, .touch_count,
            .correction_count, .constraint_count, .usage_count,
            last_used_at: toString(t.last_used_at), .version,
            archived_at: toString(t.archived_at)}
  WHEN brief
    THEN t {.topic_id, .name, .one_liner, first_seen_at: toString(t.first_seen_at),
            last_seen_at: toString(t.last_seen_at)}
  ELSE t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
          first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
          .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model, .embedding_hash, .embedding_dimensions,
          .utility_score, .decay_bucket, .touch_count, .correction_count, .constraint_count,
          .usage_count, last_used_at: toString(t.last_used_at), .version,
          archived_at: toString(t.archived_at)} END,
  brief: brief, one_liner_sources: coalesce(t.one_liner_source_ids, []), cited: cited})
  AS topics
