// Native vector indexes, 384 dimensions (all-MiniLM-L6-v2), cosine similarity.
CREATE VECTOR INDEX topic_embedding IF NOT EXISTS FOR (t:Topic) ON t.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX topic_event_embedding IF NOT EXISTS FOR (e:TopicEvent) ON e.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX skill_embedding IF NOT EXISTS FOR (s:Skill) ON s.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
