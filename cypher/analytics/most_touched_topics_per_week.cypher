// most_touched_topics_per_week: the topics the conversation came back to most, week by week.
//
// A sleep writes one TopicEvent per topic it touched, dated by the newest message it drew on, so
// a topic's events in a week are the sleeps that updated it from that week's conversation.
// Topics are ranked within each week (UTC, weeks start on Monday) by events, then by the
// messages those events cite, then by name; the first $top are returned.
//
// params:
//   $namespace  string   the memory namespace
//   $top        int = 5  how many topics to keep per week
// returns: week, rank, topic, topic_id, events, messages, first_at, last_at, week_events
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param top => 5
MATCH (e:TopicEvent {namespace: $namespace})
WITH date.truncate('week', e.at) AS week, e.topic_id AS topic_id, count(*) AS events,
     sum(size(coalesce(e.source_message_ids, []))) AS messages, min(e.at) AS first_at,
     max(e.at) AS last_at
MATCH (t:Topic {topic_id: topic_id, namespace: $namespace})
WITH week, t, events, messages, first_at, last_at
ORDER BY week, events DESC, messages DESC, t.name, t.topic_id
WITH week, sum(events) AS week_events,
     collect({t: t, events: events, messages: messages, first_at: first_at, last_at: last_at})
       AS ranked
UNWIND range(0, size(ranked) - 1) AS i
WITH week, week_events, i + 1 AS rank, ranked[i] AS r
WHERE rank <= $top
RETURN week, rank, r.t.name AS topic, r.t.topic_id AS topic_id, r.events AS events,
       r.messages AS messages, r.first_at AS first_at, r.last_at AS last_at, week_events
ORDER BY week, rank
