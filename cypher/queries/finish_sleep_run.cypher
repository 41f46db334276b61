// Record how one sleep attempt ended.
// params: $namespace, $run_id, $props (finished_at, outcome, error, counts, step_ms_json, ...)
// returns: run_id
MATCH (r:SleepRun {namespace: $namespace, run_id: $run_id})
SET r += $props
RETURN r.run_id AS run_id
