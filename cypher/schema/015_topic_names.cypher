// Known-name lookups (a re-introduced entity, a time phrase inside a name, sleep's alias match)
// ask whether a phrase is exactly a topic's name or alias. They were phrase queries over
// topic_text's analysed name and alias fields: every topic whose name merely contained the
// phrase matched ("grandma" matched 651 topics of the benchmark's namespace), the first 200 (50
// for sleep) by Lucene's score were read and compared exactly, ~0.55 ms of each context's
// first read (docs/performance.md, twelfth pass), and an exactly named topic whose alias list
// was long could rank past the limit. This index holds the lower-cased name and each alias
// whole (the keyword analyzer: one token per value, a list's elements each one token), so a
// lookup finds only exact matches (graph/fulltext.py name_query).
CREATE FULLTEXT INDEX topic_names IF NOT EXISTS
  FOR (t:Topic) ON EACH [t.name_lc, t.aliases_lc, t.ns_token]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
