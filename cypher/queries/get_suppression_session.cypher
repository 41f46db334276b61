// The suppression state of one session, unless it has expired (idle past its TTL).
// params: $namespace, $session_id, $now: datetime as ISO text (graph/db.py iso)
// returns: turn: int, record_ids: list<string>, turns: list<int>, ats: list<string>,
//          confidences: list<float>, fingerprints: list<string> (parallel lists, one entry each);
//          ats as ISO text (graph/mapping.py parses them: 256 entries decoded by the driver's
//          pure-Python temporal code took ~20 ms a read, docs/performance.md)
MATCH (s:SuppressionSession {namespace: $namespace, session_id: $session_id})
WHERE s.expires_at >= datetime($now)
RETURN s.turn AS turn, s.record_ids AS record_ids, s.turns AS turns,
       [a IN s.ats | toString(a)] AS ats,
       s.confidences AS confidences, s.fingerprints AS fingerprints
