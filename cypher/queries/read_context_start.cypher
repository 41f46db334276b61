// What a context needs before it searches, in one round trip (it was four: tail_messages,
// get_wake_state, latest_wake_packets, find_known_names; docs/performance.md): the last $n
// messages, when the namespace last woke and last slept (for "since you woke", "before you
// slept"), which of some phrases name a live topic (a reintroduced entity) and which name a
// participant of the conversation (a message's speaker: a question about them asks memory).
// The tail is read as tail_messages reads it (the (namespace, seq) index backwards, $n entries);
// known names as find_known_names finds them (the keyword index of names and aliases, then
// exact comparison), only when $names is not empty.
// params: $namespace, $n: int, $names: list<string> (lower-cased), $people: list<string>
//         (lower-cased: the phrases that may name a participant), $skills_namespace (string |
//         null: the namespace whose skills route the context, null: no skill stamp),
//         $skills_cap: int (more skill nodes than this: no stamp),
//         $lucene (graph/fulltext.py name_query: exact names and aliases, namespace-confined;
//         any valid query when $names is empty), $session_id (string | null: the suppression
//         session to read too), $now (ISO text: graph/db.py iso; the session is read unless it
//         expired by then)
// returns one row: tail (list<map>, newest first; times as ISO text, as graph/mapping.py reads them), woke_at (datetime | null),
//          slept_at (datetime | null: the newest wake packet's), conversation_tail_json
//          (string | null: that packet's tail), known (list<string>: each known phrase once),
//          speakers (list<string>: each phrase naming a participant once, as find_speakers_named),
//          skills_stamp (list<string> | null: the skill stamp of $skills_namespace, computed
//          exactly as read_skill_vectors.cypher computes it (keep the two identical); it tells the
//          skill store's cache whether its vectors are current, so routing needs no query of its
//          own; null without $skills_namespace; more than $skills_cap entries: too many to cache),
//          session (map | null: the suppression session's state as get_suppression_session
//          returns it; null without $session_id, or when it is unknown or expired), so a context's
//          suppression needs no round trip of its own (docs/performance.md, tenth pass),
//          held (list<map {name, topic_id}>: the known names that name a live topic the session's
//          state holds an entry for, live or not: the caller judges the entry's cool-down; read
//          only when a name is known and the session holds entries, by topic id)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
CALL () {
  MATCH (m:Message)
  USING INDEX m:Message(namespace, seq)
  WHERE m.namespace = $namespace AND m.seq IS NOT NULL
  WITH m ORDER BY m.namespace DESC, m.seq DESC LIMIT $n
  RETURN collect(m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)}) AS tail
}
CALL () {
  OPTIONAL MATCH (s:WakeState {namespace: $namespace})
  WHERE s.woke_at IS NOT NULL
  RETURN s.woke_at AS woke_at
}
CALL () {
  OPTIONAL MATCH (w:WakePacket {namespace: $namespace})
  USING INDEX w:WakePacket(namespace, slept_at)
  WHERE w.slept_at IS NOT NULL  // always true; lets the (namespace, slept_at) index answer
  WITH w ORDER BY w.slept_at DESC LIMIT 1
  RETURN w.slept_at AS slept_at, w.conversation_tail_json AS conversation_tail_json
}
CALL () {
  OPTIONAL MATCH (s:SuppressionSession {namespace: $namespace, session_id: $session_id})
  WHERE s.expires_at >= datetime($now)
  RETURN CASE WHEN s IS NULL THEN null ELSE {
    turn: s.turn, record_ids: s.record_ids, turns: s.turns, ats: [a IN s.ats | toString(a)],
    confidences: s.confidences, fingerprints: s.fingerprints} END AS session,
    coalesce(s.record_ids, []) AS session_ids
}
WITH tail, woke_at, slept_at, conversation_tail_json, session, session_ids,
  CASE WHEN size($names) = 0 THEN [] ELSE COLLECT {
    CALL db.index.fulltext.queryNodes('topic_names', $lucene, {limit: 200}) YIELD node
    WITH node AS t
    WHERE t.namespace = $namespace AND t.archived_at IS NULL
    UNWIND $names AS name
    WITH name, t
    WHERE t.name_lc = name OR name IN t.aliases_lc
    RETURN DISTINCT name
  } END AS known
RETURN tail, woke_at, slept_at, conversation_tail_json, session, known,
  CASE WHEN size(known) = 0 OR size(session_ids) = 0 THEN [] ELSE COLLECT {
    MATCH (t:Topic)
    WHERE t.topic_id IN session_ids AND t.namespace = $namespace AND t.archived_at IS NULL
    UNWIND known AS name
    WITH name, t
    WHERE t.name_lc = name OR name IN t.aliases_lc
    RETURN {name: name, topic_id: t.topic_id}
  } END AS held,
  COLLECT {
    UNWIND $people AS name
    WITH DISTINCT name
    WHERE EXISTS {
      MATCH (m:Message) USING INDEX m:Message(namespace, speaker_lc)
      WHERE m.namespace = $namespace AND m.speaker_lc = name
    }
    RETURN name
  } AS speakers,
  CASE WHEN $skills_namespace IS NULL THEN null ELSE COLLECT {
    MATCH (s:Skill {namespace: $skills_namespace})
    WITH s ORDER BY s.skill_id LIMIT $skills_cap + 1
    RETURN s.skill_id + '|' + coalesce(s.embedding_hash, '') + '|'
      + coalesce(toString(s.updated_at), '') + '|' + coalesce(toString(s.retired_at), '')
  } END AS skills_stamp
