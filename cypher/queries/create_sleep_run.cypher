// Record one sleep attempt, queued or started. When it starts, runs of the namespace still
// marked running by another holder are marked abandoned (their worker died: this one holds
// the lease now).
// params: $namespace, $props (run_id, holder, reason, attempt, started_at, outcome, ...)
// returns: abandoned (count)
MERGE (r:SleepRun {run_id: $props.run_id})
SET r += $props, r.namespace = $namespace
WITH r
OPTIONAL MATCH (old:SleepRun {namespace: $namespace, outcome: 'running'})
WHERE $props.outcome = 'running' AND old.holder <> $props.holder
SET old.outcome = 'abandoned', old.finished_at = $props.started_at,
    old.error = 'the worker stopped before the sleep finished; the lease expired and was taken over'
RETURN count(old) AS abandoned
