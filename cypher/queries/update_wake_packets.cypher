// Rewrite wake packets that mentioned forgotten topics or messages (top topics, tail,
// in-progress hint). TOP_TOPIC edges to deleted topics went with the topics.
// params: $namespace, $rows: list<{packet_id, props: map}>
// returns: updated (count)
UNWIND $rows AS row
MATCH (w:WakePacket {packet_id: row.packet_id, namespace: $namespace})
SET w += row.props
RETURN count(*) AS updated
