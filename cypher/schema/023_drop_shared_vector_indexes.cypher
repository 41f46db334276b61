// The plain vector indexes of 002 and 019 (no filter property: a search had to over-fetch the
// index shared by every namespace and filter after it), replaced by the namespace-filtered ones
// of 022 that every vector query reads now (`SEARCH ... WHERE n.namespace = $namespace`).
DROP INDEX topic_embedding IF EXISTS;
DROP INDEX topic_event_embedding IF EXISTS;
DROP INDEX skill_embedding IF EXISTS;
DROP INDEX passage_embedding IF EXISTS;
