// The passage stamp of each namespace (graph/passage_vectors.py): an API worker holds a
// namespace's passage vectors in memory and scores them there, and serves them only under the
// stamp it loaded them with. Every write that adds passages bumps `gen` and marks each new
// passage with it (write_message_passages.cypher: the next load reads only the passages past
// the cached `gen`, through passage_namespace_gen); every write that removes one draws a new
// `epoch` (the next load reads the namespace whole). One node per namespace, its own label so
// the passage writer's lock never waits on an append's Conversation lock.
CREATE CONSTRAINT passage_stamp_ns IF NOT EXISTS
  FOR (s:PassageStamp) REQUIRE s.namespace IS UNIQUE;
CREATE INDEX passage_namespace_gen IF NOT EXISTS FOR (p:Passage) ON (p.namespace, p.gen);
// every namespace that may hold passages gets its stamp now: "no stamp" means "no conversation"
MATCH (c:Conversation)
MERGE (s:PassageStamp {namespace: c.namespace})
  ON CREATE SET s.epoch = randomUUID(), s.gen = 0;
