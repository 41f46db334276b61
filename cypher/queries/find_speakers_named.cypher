// Which of some phrases name a participant of the namespace's conversation: a message's speaker
// (lower-cased, the (namespace, speaker_lc) index). A question naming one asks memory.
// params: $namespace, $names (lower-cased)
// returns: name (each participant's phrase once)
UNWIND $names AS name
WITH DISTINCT name
WHERE EXISTS { MATCH (m:Message) WHERE m.namespace = $namespace AND m.speaker_lc = name }
RETURN name
