// The messages some topics were mentioned in (newest first, up to $per_topic each).
// params: $namespace, $topic_ids, $per_topic   returns: topic_id, m (map)
UNWIND $topic_ids AS tid
MATCH (t:Topic {topic_id: tid, namespace: $namespace})-[:MENTIONED_IN]->(m:Message)
WITH tid, m ORDER BY m.seq DESC
WITH tid, collect(m)[0..$per_topic] AS ms
UNWIND ms AS m
RETURN tid AS topic_id, m {.*} AS m
