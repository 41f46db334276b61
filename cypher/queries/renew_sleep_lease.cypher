// Heartbeat: extend the lease while its holder still has it (a sleep in progress).
// params: $namespace, $holder, $expires_at   returns: holder (no row: the lease was lost)
MATCH (l:SleepLease {namespace: $namespace, holder: $holder})
SET l.expires_at = $expires_at
RETURN l.holder AS holder
