// Lexical (Lucene, English analyzer) candidates from the conversation of one namespace,
// optionally inside a time window: what the namespace's own BM25 reads of each (graph/messages.py
// rank_hits; the best are then read whole, get_message_hits). $query is confined to the
// namespace before Lucene ranks (graph/fulltext.py: ns_token clause, boost 0; a hit that matched
// the namespace clause only scores 0 and is dropped), so another
// namespace's messages cannot push these out of the $fetch window; the window filters after.
// params: $query (Lucene, escaped, namespace-confined), $fetch, $k, $namespace,
//         $since, $until (datetime | null)
// returns: raw (hits Lucene returned),
//          hits: list<{m: {message_id, content, speaker, at_days, seq}, score}> in Lucene's order
CALL db.index.fulltext.queryNodes('message_text_en', $query, {limit: $fetch}) YIELD node, score
WITH collect({m: node, score: score}) AS found
WITH size(found) AS raw,
  [h IN found WHERE h.m.namespace = $namespace AND h.score > 0
     AND ($since IS NULL OR h.m.at >= $since) AND ($until IS NULL OR h.m.at < $until)][0..$k]
  AS kept
RETURN raw, [h IN kept | {m: {message_id: h.m.message_id, content: h.m.content, speaker: h.m.speaker,
      at_days: h.m.at_days, seq: h.m.seq},
                          score: h.score}] AS hits
