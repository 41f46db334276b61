// Take the namespace's sleep lease unless another holder has a live one.
// The lock property serialises concurrent attempts on the lease node.
// params: $namespace, $holder, $now (wall clock), $expires_at
// returns: holder (no row when someone else holds a live lease)
MERGE (l:SleepLease {namespace: $namespace})
SET l._lock = true
REMOVE l._lock
WITH l
WHERE l.holder IS NULL OR l.expires_at < $now OR l.holder = $holder
SET l.holder = $holder, l.acquired_at = $now, l.expires_at = $expires_at
RETURN l.holder AS holder
