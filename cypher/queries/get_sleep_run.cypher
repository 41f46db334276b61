// One sleep run by id.
// params: $namespace, $run_id   returns: r
MATCH (r:SleepRun {namespace: $namespace, run_id: $run_id})
RETURN r
