// When the namespace last woke (for "since you woke") and on which wake packet.
// params: $namespace   returns: woke_at, packet_id, reason (no row before the first wake)
MATCH (s:WakeState {namespace: $namespace})
WHERE s.woke_at IS NOT NULL
RETURN s.woke_at AS woke_at, s.packet_id AS packet_id, s.reason AS reason
