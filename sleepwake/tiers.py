"""Decay and tiers (spec §8.3, seed 004). Pure.

Utility decays by ``decay_per_day`` for every day since it was last seen (applied incrementally
from ``utility_decayed_at``, so repeated sleeps do not compound). Topics holding open loops or
constraints are exempt: they stay until resolved. ``bucket``: hot / warm / cold from recency and
utility. The knobs: ``TiersConfig`` (sleepwake/config.py), ``SHERIFF_SLEEP__TIERS__...``.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Literal

from sleepwake.config import DEFAULT, TiersConfig

TIERS = DEFAULT.tiers

Bucket = Literal["hot", "warm", "cold"]


def decayed(
    utility: float, since: datetime, now: datetime, exempt: bool = False, cfg: TiersConfig = TIERS
) -> float:
    if exempt or now <= since:
        return utility
    days = (now - since).total_seconds() / 86400.0
    return float(utility * cfg.decay_per_day**days)


def bucket(
    last_seen_at: datetime, utility: float, now: datetime, cfg: TiersConfig = TIERS
) -> Bucket:
    age_days = max(0.0, (now - last_seen_at).total_seconds() / 86400.0)
    if age_days <= cfg.hot_days or utility >= cfg.hot_utility:
        return "hot"
    if age_days <= cfg.warm_days or utility >= cfg.warm_utility:
        return "warm"
    return "cold"


def recency(last_seen_at: datetime, now: datetime, tau: timedelta = TIERS.recency_tau) -> float:
    """exp(-(now - last_seen) / tau), 1.0 for anything in the future."""
    age = max(0.0, (now - last_seen_at).total_seconds())
    return math.exp(-age / tau.total_seconds())
