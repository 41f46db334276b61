// A deep search's time window inside the topic index (graph/fulltext.py in_span): a topic lasts
// from its first to its last mention, and every topic carries span_days (graph/fulltext.py
// span_tokens writes the same at every topic write): an "m" token for every UTC month its span
// touches, an "f" token for every month strictly between its first and last, and a "d" token for
// each of its days in its first and last month. topic_text indexes it, so a windowed topic
// search names the months and days that a topic overlapping the window holds one of, and Lucene
// ranks only those topics. The window was filtered after Lucene ranked the whole namespace: a
// "last week" search of a 10k-topic namespace read 800, then 3,200 topics to keep a few
// (docs/performance.md, thirteenth pass). The clause scores 0.
MATCH (t:Topic) WHERE t.first_seen_at IS NOT NULL AND t.last_seen_at IS NOT NULL
  AND t.span_days IS NULL
WITH t, date(datetime({epochMillis: t.first_seen_at.epochMillis})) AS first,
     date(datetime({epochMillis: t.last_seen_at.epochMillis})) AS seen
WITH t, first, CASE WHEN seen < first THEN first ELSE seen END AS last
WITH t, first, last, date.truncate('month', first) AS fm, date.truncate('month', last) AS lm
WITH t, first, last, fm, lm, (lm.year - fm.year) * 12 + lm.month - fm.month AS n
WITH t, first, last, fm, lm, n, [i IN range(0, n) | fm + duration({months: i})] AS months
WITH t, months, CASE WHEN n = 0
  THEN [i IN range(0, duration.inDays(first, last).days) | first + duration({days: i})]
  ELSE [i IN range(0, duration.inDays(first, fm + duration({months: 1})).days - 1)
          | first + duration({days: i})]
     + [i IN range(0, duration.inDays(lm, last).days) | lm + duration({days: i})] END AS days
WITH t, [m IN months | 'm' + substring(toString(m), 0, 4) + substring(toString(m), 5, 2)]
  + [m IN months[1..-1] | 'f' + substring(toString(m), 0, 4) + substring(toString(m), 5, 2)]
  + [d IN days | 'd' + replace(toString(d), '-', '')] AS tokens
SET t.span_days = reduce(s = head(tokens), tok IN tail(tokens) | s + ' ' + tok);
DROP INDEX topic_text IF EXISTS;
CREATE FULLTEXT INDEX topic_text IF NOT EXISTS
  FOR (t:Topic) ON EACH [t.name, t.alias_text, t.one_liner, t.gist, t.ns_token, t.span_days];
