"""The RSS soak's verdict (benchmarks/soak_stats.py): flat after warm-up passes, a steady late
slope (an unbounded cache) is flagged even when the total stays small, and so is a peak over
the limit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from soak_stats import Sample, judge, slope_per_1k


def series(rss: list[float], every: int = 100) -> list[Sample]:
    return [Sample(i * every, mb, mb - 60) for i, mb in enumerate(rss)]


def test_slope_is_mb_per_thousand_requests() -> None:
    samples = [Sample(0, 300, 0), Sample(1000, 303, 0), Sample(2000, 306, 0)]
    assert slope_per_1k(samples) == pytest.approx(3.0)
    assert slope_per_1k(samples[:1]) == 0.0
    assert slope_per_1k([Sample(5, 1, 0), Sample(5, 9, 0)]) == 0.0


def test_filling_caches_then_flat_passes() -> None:
    # rises while caches fill during warm-up, then flat with noise
    rss = [300, 330, 345, 350, 351, 350, 352, 351, 350, 351, 352, 351]
    verdict = judge(series(rss), warm_requests=300)
    assert verdict.ok, verdict.flags
    assert verdict.warm.requests == 300
    assert verdict.growth_mb == pytest.approx(1.0)
    assert verdict.peak_mb == 352


def test_steady_late_growth_is_flagged_as_unbounded() -> None:
    # +0.5 MB per 100 requests = 5 MB per 1k: small in total over this run, but no plateau
    rss = [350 + 0.5 * i for i in range(21)]
    verdict = judge(series(rss), warm_requests=200)
    assert verdict.growth_mb < 50
    assert not verdict.ok
    assert any("unbounded" in f for f in verdict.flags)


def test_large_growth_and_peak_are_flagged() -> None:
    rss = [300, 320, 340, 400, 480, 520, 520, 520, 520]
    verdict = judge(series(rss), warm_requests=200)
    assert any("peak RSS 520" in f for f in verdict.flags)
    assert any("grew" in f for f in verdict.flags)


def test_no_samples_is_an_error() -> None:
    with pytest.raises(ValueError):
        judge([], warm_requests=0)
