// Topics that cite any of some messages: MENTIONED_IN edges, or a message id inside the
// provenance of a fact, number, open loop or notable event (API-written items have no edge).
// Message ids are UUIDs, so a substring test on the JSON lists cannot hit anything else.
// params: $namespace, $message_ids: list<string>
// returns: t (map, no embedding)
MATCH (t:Topic {namespace: $namespace})
WHERE EXISTS { MATCH (t)-[:MENTIONED_IN]->(m:Message) WHERE m.message_id IN $message_ids }
   OR any(id IN $message_ids WHERE coalesce(t.facts_json, '') CONTAINS id
          OR coalesce(t.numbers_json, '') CONTAINS id
          OR coalesce(t.open_loops_json, '') CONTAINS id
          OR coalesce(t.notable_events_json, '') CONTAINS id)
RETURN t {.*, embedding: null} AS t
ORDER BY t.topic_id
