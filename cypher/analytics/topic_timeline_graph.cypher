// topic_timeline_graph: one topic and its events as a graph (switch Neo4j Browser to Graph view).
//
// The same topics as topic_timeline (by id, name or alias, case-insensitive), each drawn with
// its TopicEvents, oldest event first; an event node's properties hold at, delta_summary,
// first_seq, last_seq and source_message_ids. In the table view and the CLI each row is a path.
//
// params:
//   $namespace  string  the memory namespace
//   $topic      string  topic id, name or alias
// returns: path
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param topic => 'billing migration'
MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id = $topic OR t.name_lc = toLower($topic) OR toLower($topic) IN t.aliases_lc
MATCH path = (t)-[:HAS_EVENT]->(e:TopicEvent)
RETURN path
ORDER BY t.first_seen_at, t.topic_id, e.at, e.first_seq, e.event_id
