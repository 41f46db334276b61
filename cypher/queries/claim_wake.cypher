// Claim the namespace's wake when one is due; one caller wins even across API workers.
// The lock property serialises concurrent claims on the state node, so the condition is
// evaluated against the winner's write. Due when: forced (an explicit wake); or a wake packet
// that has not been woken on was written at or after the last wake ('sleep'); or the last turn
// is at least the silence threshold old and nobody woke since ('silence').
// params: $namespace, $now, $packet_id (null: none), $slept_at (null: none),
//         $last_turn_at (null: no turn yet), $silent_before, $force
// returns: woke_at, reason, previous_woke_at, previous_packet_id, previous_reason
//          (no row when no wake is due)
MERGE (s:WakeState {namespace: $namespace})
SET s._lock = true
REMOVE s._lock
WITH s,
     CASE
       WHEN $force THEN 'explicit'
       WHEN $packet_id IS NOT NULL AND coalesce(s.packet_id, '') <> $packet_id
            AND (s.woke_at IS NULL OR $slept_at >= s.woke_at) THEN 'sleep'
       WHEN $last_turn_at IS NOT NULL AND $last_turn_at <= $silent_before
            AND (s.woke_at IS NULL OR s.woke_at <= $last_turn_at) THEN 'silence'
     END AS reason
WHERE reason IS NOT NULL
WITH s, reason, s.woke_at AS previous, s.packet_id AS previous_packet, s.reason AS previous_reason
SET s.woke_at = $now, s.packet_id = coalesce($packet_id, s.packet_id), s.reason = reason
RETURN s.woke_at AS woke_at, reason, previous AS previous_woke_at,
       previous_packet AS previous_packet_id, previous_reason
