// Topic search's full-text entry gains the topic's gist: its most central facts (text/gist.py,
// written as t.gist by every topic write), so a question about a fact other than the one-liner
// finds its topic. Topics written before this migration get their gist at their next write.
DROP INDEX topic_text IF EXISTS;
CREATE FULLTEXT INDEX topic_text IF NOT EXISTS
  FOR (t:Topic) ON EACH [t.name, t.alias_text, t.one_liner, t.gist, t.ns_token];
