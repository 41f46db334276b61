// A context's topics and the best topics' own passages in one read: search_topic_passages and
// get_topic_summaries as one query, the same answers as the two (each part below is its file's
// text), one round trip fewer on the light path, run where the passages were searched alone
// after the topic ranking and the topics read after them (docs/retrieval.md, "The best
// topics' own passages"; docs/performance.md, Session 25). The topics the found passages'
// messages are MENTIONED_IN that are not among $topic_ids come too, as briefs: the caller
// fuses the passages into its evidence and only then knows which topics the evidence reached
// (graph/context.py ContextStore.read_topics). Reads only $namespace's nodes: the topics by id
// and namespace, the messages they cite and those messages' passages (exact cosine, no index).
// params: $namespace, $topic_ids, $full_ids, $brief_ids, $cite (as get_topic_summaries);
//         $scoped_ids: list<string> (the topics whose cited passages are searched, as
//         search_topic_passages's $topic_ids), $vector: list<float>, $k: int, $per_topic: int,
//         $until: ISO datetime text | null (as search_topic_passages)
// returns one row: hits (as search_topic_passages: list<{m: map, text, score, topics}>, best
//          first), topics (as get_topic_summaries: those of $topic_ids in the order asked, then
//          the hits' other topics as briefs)
CYPHER 25
CALL () {
  MATCH (t:Topic {namespace: $namespace})
  WHERE t.topic_id IN $scoped_ids AND t.archived_at IS NULL
  CALL (t) {
    MATCH (t)-[:MENTIONED_IN]->(m:Message {namespace: $namespace})
    WHERE $until IS NULL OR m.at < datetime($until)
    WITH m ORDER BY m.at DESC, m.seq DESC, m.message_id LIMIT $per_topic
    RETURN m
  }
  WITH DISTINCT m
  MATCH (m)-[:HAS_PASSAGE]->(p:Passage)
  WITH m, p, vector.similarity.cosine(p.embedding, $vector) AS score
  ORDER BY score DESC, p.at, p.seq, p.message_id
  LIMIT $k
  RETURN collect({
    m: m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)}, text: p.text,
    score: score,
    topics: COLLECT {
      MATCH (t:Topic)-[:MENTIONED_IN]->(m) WHERE t.archived_at IS NULL
      WITH t ORDER BY t.name, t.topic_id
      RETURN {topic_id: t.topic_id, name: t.name}
    }}) AS hits
}
WITH hits, COLLECT {
  UNWIND hits AS h
  UNWIND h.topics AS reached
  WITH DISTINCT reached.topic_id AS id
  WHERE NOT id IN $topic_ids
  RETURN id
} AS reached
CALL (reached) {
  UNWIND $topic_ids + reached AS id
  MATCH (t:Topic {topic_id: id, namespace: $namespace})
  WITH t, id IN $full_ids AS whole,
    (id IN $brief_ids OR id IN reached) AND NOT id IN $full_ids AS brief
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
            .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
            .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
            .touch_count, .correction_count, .constraint_count, .usage_count,
            last_used_at: toString(t.last_used_at), .version,
            archived_at: toString(t.archived_at)} END,
    brief: brief, one_liner_sources: coalesce(t.one_liner_source_ids, []), cited: cited})
    AS topics
}
RETURN hits, topics
