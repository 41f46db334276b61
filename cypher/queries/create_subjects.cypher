// Record subjects (ephemeral, with expires_at) and what they touched; drop expired ones.
// params: $namespace, $now, $rows: list<{props: map, topic_ids: list<string>}>
// returns: subject_id
OPTIONAL MATCH (old:Subject {namespace: $namespace}) WHERE old.expires_at < $now
DETACH DELETE old
WITH count(*) AS _
UNWIND $rows AS row
MERGE (s:Subject {subject_id: row.props.subject_id})
ON CREATE SET s = row.props
WITH s, row
UNWIND row.topic_ids AS tid
MATCH (t:Topic {topic_id: tid, namespace: $namespace})
MERGE (s)-[:TOUCHED]->(t)
RETURN DISTINCT s.subject_id AS subject_id
