"""A monotonic clock a test moves by hand (seconds as a float, read by calling it)."""

from __future__ import annotations


class ManualClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t
