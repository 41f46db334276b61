// The sleep policy (or a caller who will not wait) queues a sleep for the workers: the
// namespace is due from $wall (kept if it was due already), the sleep is dated at the latest
// $now asked for, due_version counts the marks (a worker clears the mark only if none came
// while it slept), and the next attempt will be recorded as run due_run_id (the one already
// promised, else $run_id).
// params: $namespace, $now (the sleep's date), $reason, $wall (wall clock), $run_id
// returns: due_version, run_id
MERGE (l:SleepLease {namespace: $namespace})
SET l.due_version = coalesce(l.due_version, 0) + 1,
    l.due_reason = $reason,
    l.due_now = CASE WHEN l.due_now IS NULL OR l.due_now < $now THEN $now ELSE l.due_now END,
    l.due_since = coalesce(l.due_since, $wall),
    l.due_run_id = coalesce(l.due_run_id, $run_id)
RETURN l.due_version AS due_version, l.due_run_id AS run_id
