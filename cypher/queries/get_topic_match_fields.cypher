// What sleep matching needs of some topics (no facts_json, no embedding): names, one-liner,
// the latest fact texts, time anchors.
// params: $namespace, $topic_ids   returns: topic_id, name, aliases, one_liner, facts,
//         first_seen_at, last_seen_at
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
RETURN t.topic_id AS topic_id, t.name AS name, t.aliases AS aliases, t.one_liner AS one_liner,
       coalesce(t.facts, [])[-50..] AS facts, t.first_seen_at AS first_seen_at,
       t.last_seen_at AS last_seen_at
