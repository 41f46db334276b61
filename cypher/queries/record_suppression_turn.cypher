// One turn of a session: the turn counter goes up by one (atomically: the first SET takes the
// node's write lock before the old values are read, so concurrent turns are never lost), the records injected now are stored at that turn, entries that can never
// block again (both cool-downs over) are dropped, the newest $max_entries are kept, and the
// session's expiry moves to $expires_at. An expired session starts again at turn 1. A few idle
// sessions of the namespace are deleted on the way, so abandoned sessions do not pile up.
// params: $namespace, $session_id, $record_ids: list<string>, $now: datetime,
//         $confidence: float, $fingerprint: string, $cool_turns: int,
//         $cooled_before: datetime ($now minus the cool-down time), $expires_at: datetime,
//         $max_entries: int (>= size($record_ids)), $sweep: int (idle sessions deleted at most)
// returns: turn: int (the session's turn after this one)
CALL () {
  MATCH (old:SuppressionSession)
  WHERE old.namespace = $namespace AND old.expires_at < $now
  WITH old LIMIT $sweep
  DELETE old
}
MERGE (s:SuppressionSession {namespace: $namespace, session_id: $session_id})
SET s.updated_at = $now  // a write first: the node's lock is held before anything is read
WITH s, s.expires_at IS NULL OR s.expires_at < $now AS fresh
WITH s, CASE WHEN fresh THEN 1 ELSE s.turn + 1 END AS turn,
     CASE WHEN fresh THEN [] ELSE range(0, size(s.record_ids) - 1) END AS old
WITH s, turn, [i IN old WHERE NOT s.record_ids[i] IN $record_ids
                AND (turn - s.turns[i] < $cool_turns OR s.ats[i] > $cooled_before)] AS live
WITH s, turn, $max_entries - size($record_ids) AS room, live
WITH s, turn, CASE WHEN size(live) > room THEN live[size(live) - room..] ELSE live END AS keep
SET s.turn = turn,
    s.record_ids = [i IN keep | s.record_ids[i]] + $record_ids,
    s.turns = [i IN keep | s.turns[i]] + [r IN $record_ids | turn],
    s.ats = [i IN keep | s.ats[i]] + [r IN $record_ids | $now],
    s.confidences = [i IN keep | s.confidences[i]] + [r IN $record_ids | $confidence],
    s.fingerprints = [i IN keep | s.fingerprints[i]] + [r IN $record_ids | $fingerprint],
    s.expires_at = $expires_at
RETURN turn
