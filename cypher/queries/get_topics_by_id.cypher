// Topics of one namespace by id, in the order asked (ids not in the namespace are left out).
// params: $namespace, $topic_ids: list<string>,
//         $light: true leaves out facts, facts_json and notable_events_json
// returns: t (map, no embedding)
UNWIND range(0, size($topic_ids) - 1) AS i
MATCH (t:Topic {namespace: $namespace, topic_id: $topic_ids[i]})
RETURN t {.*, embedding: null,
          facts: CASE WHEN $light THEN null ELSE t.facts END,
          facts_json: CASE WHEN $light THEN null ELSE t.facts_json END,
          notable_events_json: CASE WHEN $light THEN null ELSE t.notable_events_json END} AS t
ORDER BY i
