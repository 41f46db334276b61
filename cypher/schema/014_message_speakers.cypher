// Questions about a conversation's participants ("When did Caroline go to the support group?")
// are questions to memory even though people are a topic's entities, not topics of their own
// (docs/retrieval.md, "Request classes"). Every message carries its speaker lower-cased
// (graph/mapping.py message_props), and an index finds a namespace's messages by it, so the
// context path can ask which phrases of a message name a participant in one index seek.
MATCH (m:Message) WHERE m.speaker IS NOT NULL AND m.speaker_lc IS NULL
SET m.speaker_lc = toLower(trim(m.speaker));
CREATE INDEX message_namespace_speaker IF NOT EXISTS FOR (m:Message) ON (m.namespace, m.speaker_lc);
