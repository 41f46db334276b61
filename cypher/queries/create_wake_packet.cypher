// Write the wake packet of a sleep (idempotent on packet_id) and point it at its top topics.
// params: $namespace, $props: map, $topic_ids: list<string>
// returns: packet_id
MERGE (w:WakePacket {packet_id: $props.packet_id})
ON CREATE SET w = $props
WITH w
OPTIONAL MATCH (t:Topic {namespace: $namespace}) WHERE t.topic_id IN $topic_ids
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | MERGE (w)-[:TOP_TOPIC]->(t))
RETURN DISTINCT w.packet_id AS packet_id
