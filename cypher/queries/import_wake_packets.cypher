// Import wake packets (create only) and point each at its top topics of the same namespace.
// params: $namespace, $rows: list<{props: map, topic_ids: list<string>}>
// returns: packet_id
UNWIND $rows AS row
MERGE (w:WakePacket {packet_id: row.props.packet_id})
ON CREATE SET w = row.props, w.namespace = $namespace
WITH w, row
WHERE w.namespace = $namespace
OPTIONAL MATCH (t:Topic {namespace: $namespace}) WHERE t.topic_id IN row.topic_ids
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | MERGE (w)-[:TOP_TOPIC]->(t))
RETURN DISTINCT w.packet_id AS packet_id
