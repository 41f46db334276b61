// Give the lease back (only its holder can).
// params: $namespace, $holder   returns: released (count)
MATCH (l:SleepLease {namespace: $namespace, holder: $holder})
SET l.holder = null, l.expires_at = null
RETURN count(l) AS released
