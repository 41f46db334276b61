// Lexical (Lucene, English analyzer) search over the conversation of one namespace, optionally
// inside a time window, with the topics each message is MENTIONED_IN.
// params: $query (Lucene, escaped), $fetch, $k, $namespace, $since, $until (datetime | null)
// returns: m (map), score, topics: list<{topic_id, name, first_seen_at, last_seen_at}>
CALL db.index.fulltext.queryNodes('message_text_en', $query, {limit: $fetch}) YIELD node, score
WITH node AS m, score
WHERE m.namespace = $namespace
  AND ($since IS NULL OR m.at >= $since) AND ($until IS NULL OR m.at < $until)
WITH m, score ORDER BY score DESC LIMIT $k
OPTIONAL MATCH (t:Topic)-[:MENTIONED_IN]->(m)
WHERE t.archived_at IS NULL
RETURN m {.*} AS m, score,
       [x IN collect(t) WHERE x IS NOT NULL |
        {topic_id: x.topic_id, name: x.name}] AS topics
ORDER BY score DESC
