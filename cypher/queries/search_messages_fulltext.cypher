// Lexical (Lucene, English analyzer) search over the conversation of one namespace, optionally
// inside a time window, with the topics each message is MENTIONED_IN. $query is confined to the
// namespace before Lucene ranks (graph/fulltext.py: ns_token clause, boost 0; a hit that matched
// the namespace clause only scores 0 and is dropped), so another
// namespace's messages cannot push these out of the $fetch window; the window filters after.
// params: $query (Lucene, escaped, namespace-confined), $fetch, $k, $namespace,
//         $since, $until (datetime | null)
// returns: raw (hits Lucene returned),
//          hits: list<{m: map, score, topics: list<{topic_id, name}>}>, best first; the
//          message's times as ISO text (graph/mapping.py parses them: no driver temporal decoding)
CALL db.index.fulltext.queryNodes('message_text_en', $query, {limit: $fetch}) YIELD node, score
WITH collect({m: node, score: score}) AS found
WITH size(found) AS raw,
  [h IN found WHERE h.m.namespace = $namespace AND h.score > 0
     AND ($since IS NULL OR h.m.at >= $since) AND ($until IS NULL OR h.m.at < $until)][0..$k]
  AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS h
WITH raw, h, h.m AS m
RETURN raw, collect(CASE WHEN m IS NULL THEN null ELSE
  {m: m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)}, score: h.score,
   topics: [(t:Topic)-[:MENTIONED_IN]->(m) WHERE t.archived_at IS NULL
            | {topic_id: t.topic_id, name: t.name}]} END) AS hits
