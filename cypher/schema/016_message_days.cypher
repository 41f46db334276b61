// A deep search's time window inside the message index (graph/fulltext.py in_window): every
// message carries at_days, the UTC year, month and day of its `at` as three tokens
// ("y2026 m202602 d20260223", graph/fulltext.py day_tokens writes the same for new messages),
// and message_text_en indexes it, so a windowed query names the days, months and years that
// cover the window and Lucene ranks only those days' messages. The window was filtered after
// Lucene ranked the whole conversation: a narrow window of a large one read 320, then 1,280,
// then 5,120 rows to keep a few (docs/performance.md, thirteenth pass). The clause scores 0:
// every message keeps the score it had.
MATCH (m:Message) WHERE m.at IS NOT NULL AND m.at_days IS NULL
WITH m, toString(date(datetime({epochMillis: m.at.epochMillis}))) AS d
SET m.at_days = 'y' + substring(d, 0, 4) + ' m' + substring(d, 0, 4) + substring(d, 5, 2)
  + ' d' + substring(d, 0, 4) + substring(d, 5, 2) + substring(d, 8, 2);
DROP INDEX message_text_en IF EXISTS;
CREATE FULLTEXT INDEX message_text_en IF NOT EXISTS
  FOR (m:Message) ON EACH [m.content, m.speaker, m.ns_token, m.at_days]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
