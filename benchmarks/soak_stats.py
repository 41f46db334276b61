"""RSS samples of a long-running process -> warm level, growth, slope and a verdict (pure).

``bench_rss_soak.py`` samples one API worker's resident memory every K requests; this module
turns those samples into the figures it prints. Kept free of I/O so it is unit-tested
(tests/unit/test_soak_stats.py) without a server.

What "no growth past warm-up" means here: a worker's memory rises while its bounded caches
(text -> vector LRU, API-key cache, tokenizer and ONNX Runtime arenas) fill, then stays flat.
A leak or an unbounded cache instead keeps a steady slope to the end. So the verdict looks at
both the total growth from the warm sample to the end and the least-squares slope over the
second half of the run (MB per 1,000 requests): a slope that is still positive late in the run
is what a cache without a bound looks like, whatever the total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GROWTH_LIMIT_MB = 50.0  # total rise past warm-up tolerated (bounded caches may still fill)
SLOPE_LIMIT_MB_PER_1K = 2.0  # late slope that flags unbounded growth
RSS_LIMIT_MB = 500.0  # issue #13: RSS per API worker


@dataclass(frozen=True)
class Sample:
    """One reading: after ``requests`` requests, resident memory ``rss_mb`` (anonymous part
    ``anon_mb``: heap and arenas, what a leak grows; the rest is mapped files such as the model)."""

    requests: int
    rss_mb: float
    anon_mb: float


@dataclass(frozen=True)
class Verdict:
    warm: Sample
    end: Sample
    peak_mb: float
    growth_mb: float
    late_slope_mb_per_1k: float
    flags: list[str]

    @property
    def ok(self) -> bool:
        return not self.flags


def slope_per_1k(samples: Sequence[Sample]) -> float:
    """Least-squares slope of RSS against requests, in MB per 1,000 requests (0 for < 2 points
    or when every sample is at the same request count)."""
    if len(samples) < 2:
        return 0.0
    xs = [s.requests for s in samples]
    ys = [s.rss_mb for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return 1000 * cov / var


def judge(
    samples: Sequence[Sample],
    warm_requests: int,
    *,
    rss_limit_mb: float = RSS_LIMIT_MB,
    growth_limit_mb: float = GROWTH_LIMIT_MB,
    slope_limit: float = SLOPE_LIMIT_MB_PER_1K,
) -> Verdict:
    """The verdict over ``samples`` (in request order): warm = the first sample taken at or
    after ``warm_requests``; the late slope is fitted over the samples of the second half of
    the requests after warm-up."""
    if not samples:
        raise ValueError("no RSS samples")
    ordered = sorted(samples, key=lambda s: s.requests)
    warm = next((s for s in ordered if s.requests >= warm_requests), ordered[-1])
    end = ordered[-1]
    middle = warm.requests + (end.requests - warm.requests) / 2
    late = [s for s in ordered if s.requests >= middle]
    slope = slope_per_1k(late)
    peak = max(s.rss_mb for s in ordered)
    growth = end.rss_mb - warm.rss_mb
    flags = []
    if peak > rss_limit_mb:
        flags.append(f"peak RSS {peak:.0f} MB > {rss_limit_mb:.0f} MB")
    if growth > growth_limit_mb:
        flags.append(f"grew {growth:.0f} MB past warm-up (> {growth_limit_mb:.0f} MB)")
    if slope > slope_limit and len(late) >= 3:
        flags.append(
            f"still growing late in the run: {slope:.1f} MB per 1,000 requests "
            f"(> {slope_limit:.1f}): an unbounded cache or a leak"
        )
    return Verdict(warm, end, peak, growth, slope, flags)
