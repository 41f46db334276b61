// Range indexes on namespace and the time properties that queries filter on.
CREATE INDEX topic_namespace IF NOT EXISTS FOR (t:Topic) ON (t.namespace);
CREATE INDEX topic_last_seen IF NOT EXISTS FOR (t:Topic) ON (t.namespace, t.last_seen_at);
CREATE INDEX topic_first_seen IF NOT EXISTS FOR (t:Topic) ON (t.namespace, t.first_seen_at);
CREATE INDEX topic_event_namespace_at IF NOT EXISTS FOR (e:TopicEvent) ON (e.namespace, e.at);
CREATE INDEX topic_event_topic IF NOT EXISTS FOR (e:TopicEvent) ON (e.topic_id);
CREATE INDEX message_namespace_seq IF NOT EXISTS FOR (m:Message) ON (m.namespace, m.seq);
CREATE INDEX message_namespace_at IF NOT EXISTS FOR (m:Message) ON (m.namespace, m.at);
CREATE INDEX subject_namespace_expires IF NOT EXISTS FOR (s:Subject) ON (s.namespace, s.expires_at);
CREATE INDEX skill_namespace IF NOT EXISTS FOR (s:Skill) ON (s.namespace);
CREATE INDEX wake_packet_namespace_slept IF NOT EXISTS FOR (w:WakePacket) ON (w.namespace, w.slept_at);
