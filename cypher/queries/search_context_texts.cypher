// A context's two full-text searches in one round trip (graph/context.py search_texts): the
// first page of the conversation's search (search_messages_fulltext) and of the topics'
// candidates (search_topics_fulltext), each exactly as its own file reads it, so the stores
// rank and grow them as if they had read that page themselves. Two uncorrelated subqueries:
// each runs once and returns one row. A namespace of at most $exact_max messages has every
// match of the conversation's search read (message_complete), as search_messages_fulltext.
// params: $message_query (Lucene, escaped, namespace-confined), $message_fetch, $message_k,
//         $message_since, $message_until (datetime | null), $exact_max,
//         $topic_query (Lucene, escaped, namespace-confined), $topic_fetch,
//         $topic_since, $topic_until (datetime | null), $namespace
// returns: message_raw, message_complete, message_hits (search_messages_fulltext's raw,
//          complete and hits: the rows of the last row's score dropped when Lucene returned
//          $message_fetch of a larger namespace),
//          topic_raw, topic_hits (search_topics_fulltext's raw and hits: the rows of the
//          last row's score dropped when Lucene returned $topic_fetch)
WITH size(COLLECT {
  MATCH (m:Message) WHERE m.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS small
CALL (small) {
  CALL db.index.fulltext.queryNodes('message_text_en', $message_query,
    {limit: CASE WHEN small THEN $exact_max ELSE $message_fetch END}) YIELD node, score
  WITH collect({m: node, score: score}) AS found
  WITH size(found) AS raw, found,
    CASE WHEN NOT small AND size(found) >= $message_fetch THEN found[-1].score ELSE 0.0 END
      AS cut
  WITH raw,
    [h IN found WHERE h.m.namespace = $namespace AND h.score > cut
       AND ($message_since IS NULL OR h.m.at >= $message_since)
       AND ($message_until IS NULL OR h.m.at < $message_until)] AS kept
  RETURN raw AS message_raw, small AS message_complete,
    [h IN kept | {m: {message_id: h.m.message_id, content: h.m.content, speaker: h.m.speaker,
      at_days: h.m.at_days, seq: h.m.seq}, score: h.score}]
    AS message_hits
}
CALL () {
  CALL db.index.fulltext.queryNodes('topic_text', $topic_query, {limit: $topic_fetch})
    YIELD node, score
  WITH collect({n: node, s: score}) AS found
  WITH found, CASE WHEN size(found) >= $topic_fetch THEN found[-1].s ELSE -1.0 END AS cut
  RETURN size(found) AS topic_raw,
    [h IN found WHERE h.s > cut AND h.n.namespace = $namespace AND h.n.archived_at IS NULL
       AND ($topic_since IS NULL OR h.n.last_seen_at >= $topic_since)
       AND ($topic_until IS NULL OR h.n.first_seen_at < $topic_until)
     | {topic_id: h.n.topic_id, name: h.n.name, alias_text: h.n.alias_text,
        one_liner: h.n.one_liner, gist: coalesce(h.n.gist, ''),
        utility_score: h.n.utility_score, first_seen_at: toString(h.n.first_seen_at),
        last_seen_at: toString(h.n.last_seen_at), score: h.s}]
    AS topic_hits
}
RETURN message_raw, message_complete, message_hits, topic_raw, topic_hits
