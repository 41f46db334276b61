"""Decay and tiers (spec §8.3, seed 004). Pure.

Utility decays by ``DECAY_PER_DAY`` for every day since it was last seen (applied incrementally
from ``utility_decayed_at``, so repeated sleeps do not compound). Topics holding open loops or
constraints are exempt: they stay until resolved. ``decay_bucket``: hot / warm / cold from
recency and utility.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Literal

DECAY_PER_DAY = 0.98
DECAY_MIN_HOURS = 12.0  # a topic's stored utility is re-decayed at most this often
HOT_DAYS, WARM_DAYS = 3.0, 30.0
HOT_UTILITY, WARM_UTILITY = 10.0, 3.0
RECENCY_TAU = timedelta(days=7)

Bucket = Literal["hot", "warm", "cold"]


def decayed(utility: float, since: datetime, now: datetime, exempt: bool = False) -> float:
    if exempt or now <= since:
        return utility
    days = (now - since).total_seconds() / 86400.0
    return float(utility * DECAY_PER_DAY**days)


def bucket(last_seen_at: datetime, utility: float, now: datetime) -> Bucket:
    age_days = max(0.0, (now - last_seen_at).total_seconds() / 86400.0)
    if age_days <= HOT_DAYS or utility >= HOT_UTILITY:
        return "hot"
    if age_days <= WARM_DAYS or utility >= WARM_UTILITY:
        return "warm"
    return "cold"


def recency(last_seen_at: datetime, now: datetime, tau: timedelta = RECENCY_TAU) -> float:
    """exp(-(now - last_seen) / tau), 1.0 for anything in the future."""
    age = max(0.0, (now - last_seen_at).total_seconds())
    return math.exp(-age / tau.total_seconds())
