// The states of a life a topic's facts claim (text/claims.py: where someone lives, their job,
// employer, manager, partner, car, school), one keyword token per (speaker, owner, kind):
// "s<hash>" held now, "p<hash>" held once (graph/mapping.py topic_props writes state_keys at
// every topic write). A sleep whose new facts claim a state reads, through this index, the
// few topics of the namespace that hold it now and closes the earlier fact wherever it is filed
// (sleepwake/supersede.py supersede_states); a question about a state reads the topics that
// hold it (retrieval/candidates.py). Confined to one namespace by ns_token (graph/fulltext.py):
// a 10k-topic namespace reads only its topics holding the key, never a scan of its topics.
// Topics written before this migration carry no state_keys until they are written again.
CREATE FULLTEXT INDEX topic_states IF NOT EXISTS
  FOR (t:Topic) ON EACH [t.state_keys, t.ns_token]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
