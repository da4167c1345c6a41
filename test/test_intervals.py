"""Wilson intervals against values computed by hand from the formula (and scipy's binomial test
as an outside check of coverage), and the study's reading of which arms differ."""
from __future__ import annotations

import pytest

from conceptagent_ros.evaluation.intervals import separated, wilson
from conceptagent_ros.evaluation.study import differences


def test_wilson_matches_published_values():
    # Brown, Cai & DasGupta (2001) / textbook values: 0 of 10, 5 of 10, 10 of 10 at 95%
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=5e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=5e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(11, 10)


@pytest.mark.parametrize("n", [3, 7, 21, 37])
def test_wilson_bounds_at_the_edges_are_exact(n):
    # computed, 0 of 7's lower bound came out 5.6e-17, above the rate 0: the study's plot crashed
    # on the negative error bar it made
    assert wilson(0, n)[0] == 0.0
    assert wilson(n, n)[1] == 1.0


def test_wilson_covers_the_true_rate_about_95_percent_of_the_time():
    binom = pytest.importorskip("scipy.stats").binom
    for p, n in ((0.1, 20), (0.5, 40), (0.85, 30)):
        coverage = sum(binom.pmf(k, n, p) for k in range(n + 1) if wilson(k, n)[0] <= p <= wilson(k, n)[1])
        assert 0.92 <= coverage <= 0.99, (p, n, coverage)


def test_differences_claims_only_separated_intervals():
    rows = []
    for planner, wins in (("base", 2), ("react", 30), ("mcts", 33)):
        low, high = wilson(wins, 40)
        rows.append({"planner": planner, "llm": "simulated:realistic", "suite": "hard", "episodes": 40,
                     "success_rate": wins / 40, "success_low": low, "success_high": high})
    text = differences(rows)
    assert "mcts 82% > base 5%" in text and "react 75% > base 5%" in text
    assert "mcts ~ react" in text and "mcts 82% > react" not in text
    assert separated(wilson(2, 40), wilson(30, 40)) and not separated(wilson(30, 40), wilson(33, 40))
