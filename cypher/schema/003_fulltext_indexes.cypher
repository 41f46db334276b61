// Full-text (Lucene) indexes: topic name, aliases (joined into alias_text) and one-liner;
// message content for lexical retrieval over the raw conversation.
CREATE FULLTEXT INDEX topic_text IF NOT EXISTS FOR (t:Topic) ON EACH [t.name, t.alias_text, t.one_liner];
CREATE FULLTEXT INDEX message_text IF NOT EXISTS FOR (m:Message) ON EACH [m.content];
