// Uniqueness constraints on every id (Community edition has uniqueness only).
CREATE CONSTRAINT topic_id IF NOT EXISTS FOR (t:Topic) REQUIRE t.topic_id IS UNIQUE;
CREATE CONSTRAINT topic_event_id IF NOT EXISTS FOR (e:TopicEvent) REQUIRE e.event_id IS UNIQUE;
CREATE CONSTRAINT message_id IF NOT EXISTS FOR (m:Message) REQUIRE m.message_id IS UNIQUE;
CREATE CONSTRAINT subject_id IF NOT EXISTS FOR (s:Subject) REQUIRE s.subject_id IS UNIQUE;
CREATE CONSTRAINT skill_ns_id IF NOT EXISTS FOR (s:Skill) REQUIRE (s.namespace, s.skill_id) IS UNIQUE;
CREATE CONSTRAINT wake_packet_id IF NOT EXISTS FOR (w:WakePacket) REQUIRE w.packet_id IS UNIQUE;
CREATE CONSTRAINT conversation_ns IF NOT EXISTS FOR (c:Conversation) REQUIRE c.namespace IS UNIQUE;
