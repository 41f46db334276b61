// One turn of a session: the turn counter goes up by one (atomically: the first SET takes the
// node's write lock before the old values are read, so concurrent turns are never lost), the
// records injected now are stored at that turn, entries that can never block again (both
// cool-downs over) are dropped, the newest $max_entries are kept, and the session's expiry moves
// to $expires_at. An expired session starts again at turn 1. The session's node is the only node
// it locks (the namespace's idle sessions are deleted by sweep_suppression_sessions, in a
// transaction of their own: deleting them here locked other sessions' nodes in no fixed order,
// behind this one's, and two concurrent turns could deadlock on them).
// params: $namespace, $session_id, $record_ids: list<string>, $now: datetime,
//         $confidence: float, $fingerprint: string, $cool_turns: int,
//         $cooled_before: datetime ($now minus the cool-down time), $expires_at: datetime
//         (the three times as ISO text, read with datetime(): graph/db.py iso),
//         $max_entries: int (>= size($record_ids))
// returns: turn: int (the session's turn after this one)
MERGE (s:SuppressionSession {namespace: $namespace, session_id: $session_id})
SET s.updated_at = datetime($now)  // a write first: the node's lock is held before anything is read
WITH s, s.expires_at IS NULL OR s.expires_at < datetime($now) AS fresh
// each list is read once into a variable: indexing s.record_ids[i] inside a comprehension read
// the whole stored array again per element (256 entries x 6 lists: ~50 ms a turn,
// docs/performance.md)
WITH s, fresh, CASE WHEN fresh THEN 1 ELSE s.turn + 1 END AS turn,
     CASE WHEN fresh THEN [] ELSE s.record_ids END AS ids,
     CASE WHEN fresh THEN [] ELSE s.turns END AS turns,
     CASE WHEN fresh THEN [] ELSE s.ats END AS ats,
     CASE WHEN fresh THEN [] ELSE s.confidences END AS confidences,
     CASE WHEN fresh THEN [] ELSE s.fingerprints END AS fingerprints
WITH s, turn, ids, turns, ats, confidences, fingerprints,
     [i IN range(0, size(ids) - 1) WHERE NOT ids[i] IN $record_ids
        AND (turn - turns[i] < $cool_turns OR ats[i] > datetime($cooled_before))] AS live
WITH s, turn, ids, turns, ats, confidences, fingerprints, $max_entries - size($record_ids) AS room,
     live
WITH s, turn, ids, turns, ats, confidences, fingerprints,
     CASE WHEN size(live) > room THEN live[size(live) - room..] ELSE live END AS keep
SET s.turn = turn,
    s.record_ids = [i IN keep | ids[i]] + $record_ids,
    s.turns = [i IN keep | turns[i]] + [r IN $record_ids | turn],
    s.ats = [i IN keep | ats[i]] + [r IN $record_ids | datetime($now)],
    s.confidences = [i IN keep | confidences[i]] + [r IN $record_ids | $confidence],
    s.fingerprints = [i IN keep | fingerprints[i]] + [r IN $record_ids | $fingerprint],
    s.expires_at = datetime($expires_at)
RETURN turn
