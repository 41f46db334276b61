// topic_timeline: one topic's events in time order: what each sleep changed, from which messages.
//
// The topic is found by id, by name or by alias (case-insensitive). Several topics can share a
// name (two parties on two dates stay two topics), so every row names its topic. A sleep writes
// one event per topic it touched: at is the newest message it drew on, seq_from..seq_to the
// message range (Message.seq), messages_from..messages_to when those messages were said, and
// recorded_at the sleep that wrote the event (when its messages were compacted; null for events
// written outside a sleep). For the same timeline as a graph, see topic_timeline_graph.
//
// params:
//   $namespace  string  the memory namespace
//   $topic      string  topic id, name or alias
// returns: topic, topic_id, n, at, day, delta_summary, seq_from, seq_to, messages,
//          messages_from, messages_to, recorded_at, event_id
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param topic => 'billing migration'
MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id = $topic OR t.name_lc = toLower($topic) OR toLower($topic) IN t.aliases_lc
MATCH (t)-[:HAS_EVENT]->(e:TopicEvent)
CALL (e) {
  OPTIONAL MATCH (m:Message {namespace: $namespace})
  WHERE m.message_id IN e.source_message_ids
  RETURN min(m.at) AS messages_from, max(m.at) AS messages_to, max(m.compacted_at) AS recorded_at
}
WITH t, e, messages_from, messages_to, recorded_at
ORDER BY t.first_seen_at, t.topic_id, e.at, e.first_seq, e.event_id
WITH t, collect({e: e, from: messages_from, to: messages_to, recorded_at: recorded_at}) AS events
UNWIND range(0, size(events) - 1) AS i
WITH t, i + 1 AS n, events[i] AS ev
RETURN t.name AS topic, t.topic_id AS topic_id, n, ev.e.at AS at, date(ev.e.at) AS day,
       ev.e.delta_summary AS delta_summary, ev.e.first_seq AS seq_from,
       ev.e.last_seq AS seq_to, size(coalesce(ev.e.source_message_ids, [])) AS messages,
       ev.from AS messages_from, ev.to AS messages_to, ev.recorded_at AS recorded_at,
       ev.e.event_id AS event_id
ORDER BY t.first_seen_at, topic_id, n
