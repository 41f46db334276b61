// topics_by_first_seen: how many topics were first seen and last seen in each day, week or month.
//
// One row per time bucket (UTC; weeks start on Monday) in which some topic was first or last
// seen. first_seen counts topics that appeared in the bucket, last_seen counts topics whose most
// recent mention falls in it (topics that went quiet then, or are current), topics_total is the
// running number of topics known by the end of the bucket. Archived topics are counted too:
// this is the memory's history, not its live state.
//
// params:
//   $namespace  string                        the memory namespace
//   $bucket     'day'|'week'|'month' = 'week'  size of a time bucket
// returns: bucket, first_seen, last_seen, topics_total, first_seen_names
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param bucket => 'week'
MATCH (t:Topic {namespace: $namespace})
UNWIND [['first', t.first_seen_at], ['last', t.last_seen_at]] AS seen
WITH t, seen[0] AS kind, seen[1] AS at
ORDER BY at, t.name
WITH date.truncate($bucket, at) AS bucket,
     count(CASE WHEN kind = 'first' THEN 1 END) AS first_seen,
     count(CASE WHEN kind = 'last' THEN 1 END) AS last_seen,
     collect(CASE WHEN kind = 'first' THEN t.name END) AS names
ORDER BY bucket
WITH collect({bucket: bucket, first_seen: first_seen, last_seen: last_seen, names: names}) AS rows
UNWIND range(0, size(rows) - 1) AS i
WITH rows[i] AS row, reduce(total = 0, r IN rows[..i + 1] | total + r.first_seen) AS topics_total
RETURN row.bucket AS bucket, row.first_seen AS first_seen, row.last_seen AS last_seen,
       topics_total, row.names[..10] AS first_seen_names
ORDER BY bucket
