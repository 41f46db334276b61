// A worker claims the longest-waiting due namespace whose lease is free (or expired: its
// worker died) and whose retry time has come. The lock property serialises workers racing
// for the same lease; the condition is checked again once the lock is held.
// The attempt is recorded as the run promised when the sleep was queued, else as $run_id.
// $namespace (or null: any) keeps a worker to one namespace.
// params: $holder, $wall (wall clock), $expires_at, $run_id, $namespace
// returns: namespace, due_now, reason, due_version, attempt, run_id (no row: nothing to claim)
MATCH (l:SleepLease)
WHERE ($namespace IS NULL OR l.namespace = $namespace) AND l.due_since IS NOT NULL AND (l.holder IS NULL OR l.expires_at < $wall)
  AND (l.retry_at IS NULL OR l.retry_at <= $wall)
WITH l ORDER BY l.due_since LIMIT 8
SET l._lock = true
REMOVE l._lock
WITH l
WHERE l.due_since IS NOT NULL AND (l.holder IS NULL OR l.expires_at < $wall)
  AND (l.retry_at IS NULL OR l.retry_at <= $wall)
WITH l ORDER BY l.due_since LIMIT 1
WITH l, coalesce(l.due_run_id, $run_id) AS run_id
SET l.due_run_id = null, l.holder = $holder, l.acquired_at = $wall, l.expires_at = $expires_at,
    l.attempts = coalesce(l.attempts, 0) + 1
RETURN l.namespace AS namespace, l.due_now AS due_now, l.due_reason AS reason,
       l.due_version AS due_version, l.attempts AS attempt, run_id
