// utility_decay: every live topic's utility as of $now, how long it has been quiet, its tier.
//
// utility is the stored utility_score, which a sleep decays (x0.98 per day since the topic was
// last seen or last decayed; topics with open loops or constraints are exempt) as of
// decayed_at. utility_now carries that decay on to $now and bucket_now is the hot / warm / cold
// tier a sleep at $now would give (hot: seen <= 3 days ago or utility >= 10; warm: <= 30 days or
// >= 3; else cold), the same rules as decay_topics.cypher and sleepwake/tiers.py. Utility
// after each sleep is not stored, so the history shown is the touches that earned it:
// touch_days, the days of the topic's events, oldest first. Highest utility_now first.
//
// params:
//   $namespace  string          the memory namespace
//   $now        datetime = now  the clock (the CLI's --now; in Browser, datetime())
// returns: topic, topic_id, utility_now, bucket_now, days_since_last_seen, last_seen_at,
//          utility, decay_bucket, decayed_at, exempt, touch_count, usage_count, events,
//          touch_days
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param now => datetime()
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL
WITH t, size(coalesce(t.open_loops, [])) > 0 OR coalesce(t.constraint_count, 0) > 0 AS exempt,
     CASE WHEN t.utility_decayed_at IS NULL OR t.utility_decayed_at < t.last_seen_at
          THEN t.last_seen_at ELSE t.utility_decayed_at END AS since
WITH t, exempt, duration.inSeconds(since, $now).seconds / 86400.0 AS days,
     duration.inSeconds(t.last_seen_at, $now).seconds / 86400.0 AS age
WITH t, exempt, age,
     CASE WHEN exempt OR days <= 0 THEN coalesce(t.utility_score, 0.0)
          ELSE coalesce(t.utility_score, 0.0) * 0.98 ^ days END AS utility_now
CALL (t) {
  OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TopicEvent)
  WITH e ORDER BY e.at
  RETURN count(e) AS events, collect(date(e.at)) AS touch_days
}
RETURN t.name AS topic, t.topic_id AS topic_id, round(utility_now, 3) AS utility_now,
       CASE WHEN age <= 3 OR utility_now >= 10 THEN 'hot'
            WHEN age <= 30 OR utility_now >= 3 THEN 'warm'
            ELSE 'cold' END AS bucket_now,
       round(age, 1) AS days_since_last_seen, t.last_seen_at AS last_seen_at,
       round(coalesce(t.utility_score, 0.0), 3) AS utility, t.decay_bucket AS decay_bucket,
       t.utility_decayed_at AS decayed_at, exempt, coalesce(t.touch_count, 0) AS touch_count,
       coalesce(t.usage_count, 0) AS usage_count, events, touch_days
ORDER BY utility_now DESC, t.last_seen_at DESC, topic
