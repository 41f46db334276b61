// One step of the passage backfill (cypher/schema/021_passage_backfill.cypher): the conversation
// with a backfill cursor that has had the fewest steps (so a large namespace takes turns with
// the others), or $namespace's; its next $limit messages after the cursor in seq order; those
// without passages and not pending are marked passages_pending (the passage indexer writes
// them); the cursor moves past the batch, or is removed when the batch is the last. Takes the
// conversation's write lock (as an append does, in the same order: conversation, then
// messages), so two workers never walk one namespace at once and an append waits one batch.
// Idempotent: a message already with passages or pending is left as it is.
// params: $namespace: string | null (null: any namespace), $limit: int
// returns: namespace, walked (messages read), marked (of them marked pending), finished;
//          no row when no conversation has a cursor
MATCH (c:Conversation)
WHERE c.passages_backfill_after IS NOT NULL
  AND ($namespace IS NULL OR c.namespace = $namespace)
WITH c ORDER BY c.passages_backfill_turns, c.namespace LIMIT 1
SET c._lock = true
REMOVE c._lock
WITH c
WHERE c.passages_backfill_after IS NOT NULL
CALL (c) {
  MATCH (m:Message {namespace: c.namespace})
  WHERE m.seq > c.passages_backfill_after
  WITH m ORDER BY m.seq LIMIT $limit
  RETURN collect(m) AS batch
}
WITH c, batch, [m IN batch WHERE m.passages_pending IS NULL
                              AND NOT EXISTS { (m)-[:HAS_PASSAGE]->() }] AS missing
FOREACH (m IN missing | SET m.passages_pending = true)
WITH c, batch, missing, size(batch) < $limit AS finished
SET c.passages_backfill_after = CASE WHEN finished THEN null ELSE batch[-1].seq END,
    c.passages_backfill_turns = CASE WHEN finished THEN null
                                     ELSE c.passages_backfill_turns + 1 END
RETURN c.namespace AS namespace, size(batch) AS walked, size(missing) AS marked, finished
