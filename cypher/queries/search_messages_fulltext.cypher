// Lexical (Lucene, English analyzer) candidates from the conversation of one namespace,
// optionally inside a time window: what the namespace's own BM25 reads of each (graph/messages.py
// rank_hits; the best are then read whole, get_message_hits). $query is confined to the
// namespace before Lucene ranks (graph/fulltext.py: ns_token clause, boost 0; a hit that matched
// the namespace clause only scores 0 and is dropped), so another
// namespace's messages cannot push these out of the $fetch window; the window filters after.
// A namespace of at most $exact_max messages (counted here, a seek of its namespace index that
// stops at $exact_max + 1) has every match read (complete: true): which of its matches are
// ranked then never depends on Lucene's order, whose statistics count every tenant's messages
// (a larger one keeps Lucene's best $fetch, docs/security.md). $query's clauses score constants
// (graph/fulltext.py message_query: how many of the terms a message holds), so when Lucene
// returned $fetch rows of a larger namespace the rows of the last row's score are dropped:
// which messages of that score made the window follows Lucene's document order, which every
// tenant's writes move; the rows above it are every message of the namespace scoring higher.
// params: $query (Lucene, escaped, namespace-confined), $fetch, $k (the pool graph/messages.py
//         ranks; not read here), $namespace,
//         $since, $until (datetime | null), $exact_max (graph/messages.py MESSAGE_EXACT_MAX)
// returns: raw (hits Lucene returned), complete (every match of the namespace read),
//          hits: list<{m: {message_id, content, speaker, at_days, seq}, score}> in Lucene's order
WITH size(COLLECT {
  MATCH (m:Message) WHERE m.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS complete
CALL (complete) {
  CALL db.index.fulltext.queryNodes('message_text_en', $query,
    {limit: CASE WHEN complete THEN $exact_max ELSE $fetch END}) YIELD node, score
  RETURN collect({m: node, score: score}) AS found
}
WITH complete, size(found) AS raw, found,
  CASE WHEN NOT complete AND size(found) >= $fetch THEN found[-1].score ELSE 0.0 END AS cut
WITH complete, raw,
  [h IN found WHERE h.m.namespace = $namespace AND h.score > cut
     AND ($since IS NULL OR h.m.at >= $since) AND ($until IS NULL OR h.m.at < $until)] AS kept
RETURN raw, complete, [h IN kept | {m: {message_id: h.m.message_id, content: h.m.content,
      speaker: h.m.speaker, at_days: h.m.at_days, seq: h.m.seq},
                          score: h.score}] AS hits
