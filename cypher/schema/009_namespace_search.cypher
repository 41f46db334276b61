// Namespace-filtered full-text search (graph/fulltext.py): every Topic and Message carries
// ns_token, a one-word encoding of its namespace, and the full-text indexes index it, so a query
// `ns_token:<token>^0 AND (...)` ranks only the caller's documents (another tenant's documents
// can no longer push them out of Lucene's top hits). The encoding here must match
// graph.fulltext.namespace_token: a-z 0-9 kept, A-Z -> '_' + lower case, '_' '.' ':' '-' ->
// '_0' '_1' '_2' '_3', anything else -> '_9_', then 'ns' + ... + '0'.
// Also: an index to find a namespace's message by external_id (idempotent appends).
MATCH (t:Topic) WHERE t.ns_token IS NULL AND t.namespace IS NOT NULL
SET t.ns_token = 'ns' + reduce(s = '', ch IN split(t.namespace, '') | s +
  CASE WHEN ch =~ '[a-z0-9]' THEN ch
       WHEN ch =~ '[A-Z]' THEN '_' + toLower(ch)
       WHEN ch = '_' THEN '_0' WHEN ch = '.' THEN '_1' WHEN ch = ':' THEN '_2'
       WHEN ch = '-' THEN '_3' ELSE '_9_' END) + '0';
MATCH (m:Message) WHERE m.ns_token IS NULL AND m.namespace IS NOT NULL
SET m.ns_token = 'ns' + reduce(s = '', ch IN split(m.namespace, '') | s +
  CASE WHEN ch =~ '[a-z0-9]' THEN ch
       WHEN ch =~ '[A-Z]' THEN '_' + toLower(ch)
       WHEN ch = '_' THEN '_0' WHEN ch = '.' THEN '_1' WHEN ch = ':' THEN '_2'
       WHEN ch = '-' THEN '_3' ELSE '_9_' END) + '0';
DROP INDEX topic_text IF EXISTS;
CREATE FULLTEXT INDEX topic_text IF NOT EXISTS
  FOR (t:Topic) ON EACH [t.name, t.alias_text, t.one_liner, t.ns_token];
DROP INDEX message_text_en IF EXISTS;
CREATE FULLTEXT INDEX message_text_en IF NOT EXISTS FOR (m:Message) ON EACH [m.content, m.speaker, m.ns_token]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE INDEX message_namespace_external_id IF NOT EXISTS FOR (m:Message) ON (m.namespace, m.external_id);
