// The passages of a message (sentences, text/passages.py) with their MiniLM vectors: evidence
// found by meaning (graph/passages.py). Like every vector index on 5.26 it cannot filter: a
// search over-fetches and keeps its namespace's rows, or scans the namespace exactly
// (search_passages_vector.cypher). passage_namespace serves that scan and a forget of the
// namespace; message_passages_pending finds the
// messages whose passages are still to be written (a node without the property is not in it).
CREATE VECTOR INDEX passage_embedding IF NOT EXISTS FOR (p:Passage) ON p.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE INDEX passage_namespace IF NOT EXISTS FOR (p:Passage) ON (p.namespace);
CREATE INDEX message_passages_pending IF NOT EXISTS FOR (m:Message) ON (m.passages_pending);
