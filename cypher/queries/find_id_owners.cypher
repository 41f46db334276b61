// Which namespace owns each of some ids (ids are unique per label across the whole database):
// an import keeps an id only when it is free or already the importer's.
// params: $rows: list<{kind: 'topic'|'message'|'event'|'wake_packet'|'skill_run', id: string}>
// returns: kind, id, namespace (one row per id that exists)
UNWIND $rows AS row
CALL (row) {
  MATCH (n:Topic {topic_id: row.id}) WHERE row.kind = 'topic' RETURN n.namespace AS ns
  UNION
  MATCH (n:Message {message_id: row.id}) WHERE row.kind = 'message' RETURN n.namespace AS ns
  UNION
  MATCH (n:TopicEvent {event_id: row.id}) WHERE row.kind = 'event' RETURN n.namespace AS ns
  UNION
  MATCH (n:WakePacket {packet_id: row.id}) WHERE row.kind = 'wake_packet' RETURN n.namespace AS ns
  UNION
  MATCH (n:SkillRun {run_id: row.id}) WHERE row.kind = 'skill_run' RETURN n.namespace AS ns
}
RETURN row.kind AS kind, row.id AS id, ns AS namespace
