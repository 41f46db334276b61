// The names and aliases of a namespace's live topics that go by one of the slice speakers'
// themes ("melanie's pottery") or name a member of one ("toby (andrew's dog)"): what a sleep
// matches a speaker's words against, so that "pup" said in May joins the "Melanie's dog" of
// March and "Toby" joins "Andrew's dog" (sleepwake/theme_words.py). One pass over the
// namespace's topics (its namespace index), lower-cased names only, at most $limit.
// params: $namespace, $prefixes: list<string> (lower-cased "<speaker>'s "), $limit
// returns: name (lower-cased name or alias), sorted
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL
UNWIND [t.name_lc] + coalesce(t.aliases_lc, []) AS name
WITH DISTINCT name
WHERE any(p IN $prefixes WHERE name STARTS WITH p OR name CONTAINS ' (' + p)
RETURN name
ORDER BY name
LIMIT $limit
