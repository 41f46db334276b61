// Inside the sleep's commit: lock the lease and check that this sleep still holds it, so a
// sleep whose lease was taken over (its worker stalled past the lease) cannot commit.
// params: $namespace, $holder   returns: holder (no row: the lease is someone else's)
MATCH (l:SleepLease {namespace: $namespace})
SET l._lock = true
REMOVE l._lock
WITH l
WHERE l.holder = $holder
RETURN l.holder AS holder
