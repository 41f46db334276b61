// The topics a worker's copy of a namespace's topic vectors picked (graph/topic_vectors.py),
// read by id within the namespace and ordered as search_topics_vector.cypher orders its exact
// scan (Neo4j's cosine, then name, first_seen_at, topic_id), with the namespace's TopicStamp,
// read first: the copy's answer stands only when that stamp is the one it was read under.
// The filters are the exact scan's (live, with an embedding, in the window).
// params: $namespace, $ids: list<string> (the copy's candidates), $vector, $k, $light,
//         $scan_since (ISO text: the window's start, or a date before every topic), $until
//         (ISO text or null), $topic_ids: list<string> (read besides, as
//         search_topics_vector.cypher reads them)
// returns: epoch (null: no stamp), hits: list<{t: map, score}> best first (the projection of
//          search_topics_vector.cypher), topics: the topics of $topic_ids not in hits
CYPHER 25
CALL () {
  OPTIONAL MATCH (s:TopicStamp {namespace: $namespace})
  RETURN s.epoch AS epoch
}
CALL () {
  UNWIND $ids AS id
  MATCH (n:Topic {namespace: $namespace, topic_id: id})
  WHERE n.embedding IS NOT NULL AND n.archived_at IS NULL
    AND n.last_seen_at >= datetime($scan_since)
    AND ($until IS NULL OR n.first_seen_at < datetime($until))
  WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
  ORDER BY score DESC, n.name, n.first_seen_at, n.topic_id
  LIMIT $k
  RETURN collect({t: CASE WHEN $light
       THEN n {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
               first_seen_at: toString(n.first_seen_at), last_seen_at: toString(n.last_seen_at),
               .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
               .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
               .touch_count, .correction_count, .constraint_count, .usage_count,
               last_used_at: toString(n.last_used_at), .version,
               archived_at: toString(n.archived_at)}
       ELSE n {.*, embedding: null} END, score: score}) AS hits
}
WITH epoch, hits, [h IN hits | h.t.topic_id] AS found
RETURN epoch, hits, COLLECT {
  UNWIND range(0, size($topic_ids) - 1) AS i
  WITH i WHERE NOT $topic_ids[i] IN found
  MATCH (t:Topic {namespace: $namespace, topic_id: $topic_ids[i]})
  WITH i, CASE WHEN $light
    THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
            first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
            .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
            .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
            .touch_count, .correction_count, .constraint_count, .usage_count,
            last_used_at: toString(t.last_used_at), .version,
            archived_at: toString(t.archived_at)}
    ELSE t {.*, embedding: null} END AS t
  ORDER BY i
  RETURN t
} AS topics
