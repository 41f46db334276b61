// The worker's sleep ended: give the lease back. Done ($retry_at null): the due mark is
// cleared unless the policy marked the namespace again while it slept (due_version moved on).
// Failed: the mark stays, retried from $retry_at; $reset_attempts starts a new series.
// params: $namespace, $holder, $due_version, $retry_at, $reset_attempts
// returns: still_due (no row: the lease was not this worker's any more)
MATCH (l:SleepLease {namespace: $namespace, holder: $holder})
WITH l, $retry_at IS NULL AND l.due_version = $due_version AS clear
SET l.holder = null, l.expires_at = null, l.retry_at = $retry_at,
    l.attempts = CASE WHEN $retry_at IS NULL OR $reset_attempts THEN 0 ELSE l.attempts END,
    l.due_since = CASE WHEN clear THEN null ELSE l.due_since END,
    l.due_now = CASE WHEN clear THEN null ELSE l.due_now END
RETURN l.due_since IS NOT NULL AS still_due
