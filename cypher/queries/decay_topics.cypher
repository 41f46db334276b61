// Utility decay (x $per_day for each day since last decayed or seen; topics with open loops or
// constraints are exempt) and the hot / warm / cold bucket, for every live topic.
// Topics decayed less than $min_hours ago are left for a later sleep (decay is exact either way).
// params: $namespace, $now, $min_hours, $per_day, $hot_days, $warm_days, $hot_utility, $warm_utility
// Bumps version: a concurrent writer holding the old version must re-read.
// returns: decayed (count)
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL
  AND (t.utility_decayed_at IS NULL OR t.utility_decayed_at <= $now - duration({hours: $min_hours}))
WITH t, CASE WHEN t.utility_decayed_at IS NULL OR t.utility_decayed_at < t.last_seen_at
             THEN t.last_seen_at ELSE t.utility_decayed_at END AS since
WITH t, since, duration.inSeconds(since, $now).seconds / 86400.0 AS days,
     duration.inSeconds(t.last_seen_at, $now).seconds / 86400.0 AS age
WITH t, age, CASE WHEN days <= 0 OR size(coalesce(t.open_loops, [])) > 0
                       OR coalesce(t.constraint_count, 0) > 0
                  THEN t.utility_score
                  ELSE t.utility_score * $per_day ^ days END AS utility
SET t.utility_score = utility, t.version = t.version + 1,
    t.utility_decayed_at = CASE WHEN $now > t.last_seen_at THEN $now ELSE t.last_seen_at END,
    t.decay_bucket = CASE WHEN age <= $hot_days OR utility >= $hot_utility THEN 'hot'
                          WHEN age <= $warm_days OR utility >= $warm_utility THEN 'warm'
                          ELSE 'cold' END
RETURN count(t) AS decayed
