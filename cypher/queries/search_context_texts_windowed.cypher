// A deep context's reads that need no vector, in one round trip (graph/context.py
// search_texts with a window): what search_context_texts reads (the conversation's all-time
// matches and the topics' windowed full-text candidates), the first page of the window's own
// matches (search_messages_fulltext with the window) and the topics with an event in the
// window (event_topic_ids_in_window), each exactly as its own file reads it.
// A namespace of at most $exact_max messages has every match of both message searches read
// (message_complete, window_complete), as search_messages_fulltext.
// params: search_context_texts' ($message_*, $topic_*, $namespace, $exact_max), and
//         $window_query, $window_fetch, $window_k, $window_since, $window_until (the window's
//         message search), $event_since, $event_until (datetime, both given: the
//         (namespace, at) index is seeked), $event_limit; $topic_need (the candidates the
//         topic search keeps), $topic_next and $window_next (the fetch of each search's next
//         page, as graph.overfetch asks for it: read here too when the first page is short,
//         so a narrow window's second page costs no round trip of its own; 0: none)
// returns: search_context_texts' columns, window_raw, window_complete, window_hits
//          (search_messages_fulltext's raw, complete and hits), event_topic_ids (event_topic_ids_in_window's topic_ids), and
//          topic_next_raw / topic_next_hits, window_next_raw / window_next_hits: the next
//          pages (raw null when not read)
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
  // search_topics_fulltext's cut: the rows of the last row's score dropped when Lucene
  // returned $topic_fetch (which of them made the window follows its document order)
  WITH size(found) AS raw,
    [h IN found WHERE h.s > CASE WHEN size(found) >= $topic_fetch THEN found[-1].s ELSE -1.0 END
       AND h.n.namespace = $namespace AND h.n.archived_at IS NULL
       AND ($topic_since IS NULL OR h.n.last_seen_at >= $topic_since)
       AND ($topic_until IS NULL OR h.n.first_seen_at < $topic_until)] AS kept
  // the next page when this one is short, as the store would ask for it next
  WITH raw, kept, CASE
    WHEN size(kept) < $topic_need AND raw >= $topic_fetch AND $topic_next > $topic_fetch
    THEN COLLECT {
      CALL db.index.fulltext.queryNodes('topic_text', $topic_query, {limit: $topic_next})
        YIELD node, score
      RETURN {n: node, s: score} AS h
    } END AS more
  WITH raw, kept, more,
    CASE WHEN size(more) >= $topic_next THEN more[-1].s ELSE -1.0 END AS more_cut
  RETURN raw AS topic_raw,
    [h IN kept | {topic_id: h.n.topic_id, name: h.n.name, alias_text: h.n.alias_text,
                  one_liner: h.n.one_liner, gist: coalesce(h.n.gist, ''),
        utility_score: h.n.utility_score, first_seen_at: toString(h.n.first_seen_at),
        last_seen_at: toString(h.n.last_seen_at), score: h.s}] AS topic_hits,
    size(more) AS topic_next_raw,
    [h IN coalesce(more, []) WHERE h.s > more_cut
       AND h.n.namespace = $namespace AND h.n.archived_at IS NULL
       AND ($topic_since IS NULL OR h.n.last_seen_at >= $topic_since)
       AND ($topic_until IS NULL OR h.n.first_seen_at < $topic_until)
     | {topic_id: h.n.topic_id, name: h.n.name, alias_text: h.n.alias_text,
        one_liner: h.n.one_liner, gist: coalesce(h.n.gist, ''),
        utility_score: h.n.utility_score, first_seen_at: toString(h.n.first_seen_at),
        last_seen_at: toString(h.n.last_seen_at), score: h.s}] AS topic_next_hits
}
CALL (small) {
  CALL db.index.fulltext.queryNodes('message_text_en', $window_query,
    {limit: CASE WHEN small THEN $exact_max ELSE $window_fetch END}) YIELD node, score
  WITH collect({m: node, score: score}) AS found
  WITH size(found) AS raw, found,
    CASE WHEN NOT small AND size(found) >= $window_fetch THEN found[-1].score ELSE 0.0 END
      AS cut
  WITH raw,
    [h IN found WHERE h.m.namespace = $namespace AND h.score > cut
       AND ($window_since IS NULL OR h.m.at >= $window_since)
       AND ($window_until IS NULL OR h.m.at < $window_until)] AS kept
  // a narrow window keeps a share of Lucene's rows: the next page when this one is short, as
  // the store would ask for it next (one round trip fewer, the same rows); none when the
  // namespace was read whole
  WITH raw, kept, CASE
    WHEN NOT small AND size(kept) < $window_k AND raw >= $window_fetch
      AND $window_next > $window_fetch
    THEN COLLECT {
      CALL db.index.fulltext.queryNodes('message_text_en', $window_query, {limit: $window_next})
        YIELD node, score
      RETURN {m: node, score: score} AS h
    } END AS more
  WITH raw, kept, more, size(more) AS next_raw,
    CASE WHEN size(more) >= $window_next THEN more[-1].score ELSE 0.0 END AS next_cut
  WITH raw, kept, next_raw,
    [h IN coalesce(more, []) WHERE h.m.namespace = $namespace AND h.score > next_cut
       AND ($window_since IS NULL OR h.m.at >= $window_since)
       AND ($window_until IS NULL OR h.m.at < $window_until)] AS next_kept
  RETURN raw AS window_raw, small AS window_complete,
    [h IN kept | {m: {message_id: h.m.message_id, content: h.m.content, speaker: h.m.speaker,
      at_days: h.m.at_days, seq: h.m.seq}, score: h.score}]
    AS window_hits,
    next_raw AS window_next_raw,
    [h IN next_kept | {m: {message_id: h.m.message_id, content: h.m.content, speaker: h.m.speaker,
      at_days: h.m.at_days, seq: h.m.seq},
                       score: h.score}] AS window_next_hits
}
CALL () {
  MATCH (e:TopicEvent)
  WHERE e.namespace = $namespace AND e.at >= $event_since AND e.at < $event_until
  WITH DISTINCT e.topic_id AS topic_id LIMIT $event_limit
  RETURN collect(topic_id) AS event_topic_ids
}
RETURN message_raw, message_complete, message_hits, topic_raw, topic_hits, topic_next_raw,
  topic_next_hits, window_raw, window_complete, window_hits, window_next_raw, window_next_hits, event_topic_ids
