// edges_per_sleep: how many topic-to-topic edges each sleep formed, by type.
//
// A sleep writes all its edges with created_at = its slept_at (link_topics.cypher), so every
// sleep (one WakePacket each) is a row, also when it formed no edge. Edges made outside a sleep
// (TopicStore.link) appear as rows of their own with formed_by = 'link'. An edge counts once,
// for the sleep that created it; later sleeps that strengthen it do not count it again.
// edges_total is the running number of edges; messages is how many messages the sleep compacted.
//
// params:
//   $namespace  string  the memory namespace
// returns: formed_at, day, formed_by, edges_formed, relates_to, depends_on, part_of, next, prev,
//          edges_total, messages
//
// Neo4j Browser:
//   :param namespace => 'demo'
OPTIONAL MATCH (w:WakePacket {namespace: $namespace})
WITH collect(DISTINCT w.slept_at) AS sleeps
OPTIONAL MATCH (:Topic {namespace: $namespace})-[r:RELATES_TO|DEPENDS_ON|PART_OF|NEXT|PREV]->
               (:Topic {namespace: $namespace})
WITH sleeps, r.created_at AS at, collect(type(r)) AS types
WITH sleeps, collect(CASE WHEN at IS NOT NULL THEN {at: at, types: types} END) AS formed
OPTIONAL MATCH (m:Message {namespace: $namespace})
WHERE m.compacted_at IS NOT NULL
WITH sleeps, formed, m.compacted_at AS at, count(m) AS n
WITH sleeps, formed, collect(CASE WHEN at IS NOT NULL THEN {at: at, n: n} END) AS compacted
UNWIND sleeps + [f IN formed WHERE NOT f.at IN sleeps | f.at] AS at
WITH at, at IN sleeps AS by_sleep,
     coalesce([f IN formed WHERE f.at = at][0].types, []) AS types,
     coalesce([c IN compacted WHERE c.at = at][0].n, 0) AS messages
ORDER BY at
WITH collect({at: at, by_sleep: by_sleep, types: types, messages: messages}) AS rows
UNWIND range(0, size(rows) - 1) AS i
WITH rows[i] AS row, reduce(total = 0, x IN rows[..i + 1] | total + size(x.types)) AS edges_total
RETURN row.at AS formed_at, date(row.at) AS day,
       CASE WHEN row.by_sleep THEN 'sleep' ELSE 'link' END AS formed_by,
       size(row.types) AS edges_formed,
       size([x IN row.types WHERE x = 'RELATES_TO']) AS relates_to,
       size([x IN row.types WHERE x = 'DEPENDS_ON']) AS depends_on,
       size([x IN row.types WHERE x = 'PART_OF']) AS part_of,
       size([x IN row.types WHERE x = 'NEXT']) AS next,
       size([x IN row.types WHERE x = 'PREV']) AS prev,
       edges_total, row.messages AS messages
ORDER BY formed_at
