// The topic stamp of each namespace (graph/topic_vectors.py): an API worker holds a namespace's
// live topic vectors (with the times its windowed search filters on) in memory and scores them
// there, and serves them only while the namespace's stamp is the one it read them under. Every
// write that creates, deletes or rewrites a topic (create, update and its touches and merges,
// archive, forget, import, the redaction rewrite) draws a new `epoch` in the same transaction;
// dropping a namespace deletes its stamp. One node per namespace, its own label.
CREATE CONSTRAINT topic_stamp_ns IF NOT EXISTS
  FOR (s:TopicStamp) REQUIRE s.namespace IS UNIQUE;
// every namespace holding topics gets its stamp now: a worker holds no copy of a namespace that
// has topics and no stamp
MATCH (t:Topic)
WITH DISTINCT t.namespace AS ns
MERGE (s:TopicStamp {namespace: ns})
  ON CREATE SET s.epoch = randomUUID();
