// Vector indexes that filter by namespace inside the index (Neo4j 2025.01+, Cypher 25): each
// holds `namespace` as a filter property, so `SEARCH n IN (VECTOR INDEX ... WHERE n.namespace =
// $namespace LIMIT $fetch)` walks only the namespace's vectors and another tenant's neither
// crowds its answer nor adds to its reads (docs/neo4j.md, "Filtered vector search";
// docs/security.md, "Vector search confined before ranking"). Built online beside the plain
// indexes of 002 and 019, which 023 drops once no query reads them. 5.26 refuses `WITH [...]`:
// the managed server is 2026.08.1 (graph/server.py), and a store of 5.26 is upgraded on its
// first start (graph/server_store.py). Same vectors as before: 384 dimensions (all-MiniLM-L6-v2),
// cosine.
// A store written by 5.26 keeps its old kernel version after the upgrade until its first write
// transaction, and an index created before that gets the old default provider (`vector-2.0`),
// which refuses filter properties ("Creating a filtering vector index with provider
// 'vector-2.0' is not supported"). So the first statement writes (and leaves nothing): after
// it the store is at 2026.08's kernel and the indexes below get `vector-2026.08`, as on a
// fresh database (found by scripts/test-neo4j-upgrade; docs/neo4j.md, "The switch").
CREATE (probe:SchemaKernelUpgrade) DELETE probe;
CYPHER 25 CREATE VECTOR INDEX topic_embedding_ns IF NOT EXISTS
  FOR (t:Topic) ON t.embedding WITH [t.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CYPHER 25 CREATE VECTOR INDEX topic_event_embedding_ns IF NOT EXISTS
  FOR (e:TopicEvent) ON e.embedding WITH [e.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CYPHER 25 CREATE VECTOR INDEX skill_embedding_ns IF NOT EXISTS
  FOR (s:Skill) ON s.embedding WITH [s.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CYPHER 25 CREATE VECTOR INDEX passage_embedding_ns IF NOT EXISTS
  FOR (p:Passage) ON p.embedding WITH [p.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
