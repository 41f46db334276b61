// Sleep runs of a namespace, newest first, a page at a time (keyset on started_at, run_id).
// params: $namespace, $before (started_at of the last run of the previous page, or null),
//         $before_id (its run_id, or null), $limit
// returns: r (the SleepRun node)
MATCH (r:SleepRun {namespace: $namespace})
WHERE $before IS NULL OR r.started_at < $before
   OR (r.started_at = $before AND r.run_id < $before_id)
RETURN r
ORDER BY r.started_at DESC, r.run_id DESC
LIMIT $limit
