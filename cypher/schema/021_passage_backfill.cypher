// The backfill of messages stored before 019_message_passages.cypher: they were never marked
// passages_pending, so they have no passages and are found by their words only. Every
// conversation stored so far gets a cursor, passages_backfill_after = -1 (the seq its walk has
// passed); the sleep worker walks each namespace's messages in bounded batches from it
// (mark_passage_backfill.cypher marks those without passages pending, and the ordinary passage
// indexer writes them), one namespace after another, and removes the cursor at the end. A
// conversation created after this migration never gets one: every append and import marks its
// messages pending. conversation_passage_backfill finds the conversations still to walk
// (a node without the property is not in it).
CREATE INDEX conversation_passage_backfill IF NOT EXISTS
  FOR (c:Conversation) ON (c.passages_backfill_after);
MATCH (c:Conversation)
WHERE c.passages_backfill_after IS NULL
SET c.passages_backfill_after = -1, c.passages_backfill_turns = 0;
