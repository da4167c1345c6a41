"""Confidence intervals for success rates, and what they let a report claim.

Wilson's score interval (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it over the normal
approximation for the small n and extreme rates benchmarks have): for k successes in n trials at
z = 1.96, centre (p + z^2/2n) / (1 + z^2/n) and half-width z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n).
Two arms are called different only when their intervals do not overlap (conservative: it misses
some real differences and claims none that the intervals do not support).
"""
from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate; (0, 1) when there are no trials."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n} trials")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at no successes (or all) the bound is 0 (or 1) exactly; computed, it can come out 1e-17 off,
    # above the rate itself, and a plot's error bar from it is then negative
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def separated(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """True when the intervals do not overlap."""
    return a[1] < b[0] or b[1] < a[0]


def percent_interval(low: float, high: float) -> str:
    return f"[{100 * low:.0f}–{100 * high:.0f}]"
