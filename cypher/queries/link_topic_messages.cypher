// Provenance in the graph: (:Topic)-[:MENTIONED_IN]->(:Message) for every message a topic's
// facts came from, so lexical hits on the raw conversation lead to the topics that hold them.
// params: $namespace, $rows: list<{topic_id, message_ids: list<string>}>
// returns: linked (count)
UNWIND $rows AS row
MATCH (t:Topic {topic_id: row.topic_id, namespace: $namespace})
UNWIND row.message_ids AS mid
MATCH (m:Message {message_id: mid, namespace: $namespace})
MERGE (t)-[:MENTIONED_IN]->(m)
RETURN count(*) AS linked
