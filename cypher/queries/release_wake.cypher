// Undo a wake claim whose turn failed (the model could not be reached): put back what the
// claim replaced, unless someone has claimed a wake since.
// params: $namespace, $woke_at, $reason, $previous_woke_at, $previous_packet_id, $previous_reason
// returns: released (no row when the claim is no longer the current one)
MATCH (s:WakeState {namespace: $namespace})
WHERE s.woke_at = $woke_at AND s.reason = $reason
SET s.woke_at = $previous_woke_at, s.packet_id = $previous_packet_id, s.reason = $previous_reason
RETURN true AS released
