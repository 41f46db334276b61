// Drop forgotten records from every session of a namespace (a deleted topic is no longer
// remembered anywhere, not even as "already shown").
// params: $namespace, $record_ids: list<string>
// returns: sessions: int (sessions changed)
MATCH (s:SuppressionSession {namespace: $namespace})
WHERE any(r IN s.record_ids WHERE r IN $record_ids)
WITH s, [i IN range(0, size(s.record_ids) - 1) WHERE NOT s.record_ids[i] IN $record_ids] AS keep
SET s.record_ids = [i IN keep | s.record_ids[i]],
    s.turns = [i IN keep | s.turns[i]],
    s.ats = [i IN keep | s.ats[i]],
    s.confidences = [i IN keep | s.confidences[i]],
    s.fingerprints = [i IN keep | s.fingerprints[i]]
RETURN count(s) AS sessions
