// A namespace-wide operation (forget of a whole namespace and its dry run, export, stats) reads
// that namespace's nodes only: one index per label answers "every node of the label in this
// namespace". Labels without one before: their namespace-wide reads scanned every node of
// every tenant (~0.7 us a node). Topic (topic_namespace), Skill (skill_namespace) and the
// labels unique per namespace (Conversation, SleepLease, WakeState) had theirs already.
CREATE INDEX message_namespace IF NOT EXISTS FOR (m:Message) ON (m.namespace);
CREATE INDEX topic_event_namespace IF NOT EXISTS FOR (e:TopicEvent) ON (e.namespace);
CREATE INDEX subject_namespace IF NOT EXISTS FOR (s:Subject) ON (s.namespace);
CREATE INDEX skill_run_namespace IF NOT EXISTS FOR (r:SkillRun) ON (r.namespace);
CREATE INDEX sleep_run_namespace IF NOT EXISTS FOR (r:SleepRun) ON (r.namespace);
CREATE INDEX wake_packet_namespace IF NOT EXISTS FOR (w:WakePacket) ON (w.namespace);
CREATE INDEX api_key_namespace IF NOT EXISTS FOR (k:ApiKey) ON (k.namespace);
CREATE INDEX suppression_session_namespace IF NOT EXISTS FOR (s:SuppressionSession) ON (s.namespace);
