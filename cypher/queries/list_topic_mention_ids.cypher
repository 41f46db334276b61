// The ids of the messages some topics are MENTIONED_IN (their sources in the conversation).
// params: $namespace, $topic_ids: list<string>
// returns: topic_id, message_ids (list<string>)
UNWIND $topic_ids AS tid
MATCH (t:Topic {topic_id: tid, namespace: $namespace})
OPTIONAL MATCH (t)-[:MENTIONED_IN]->(m:Message {namespace: $namespace})
RETURN tid AS topic_id, collect(m.message_id) AS message_ids
