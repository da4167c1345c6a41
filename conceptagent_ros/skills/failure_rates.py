"""`SKILL=P` pairs: injected physical failure rates, as the command line (`--failure-rate`) and the
robot stand-in's `failure_rates` parameter take them. One parser, so both refuse the same input
with the same words."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.terminal import printable


def parse_failure_rates(items: Iterable[str], skills: Sequence[str], source: str = "--failure-rate") -> dict[str, float]:
    """{skill: probability} from `SKILL=P` items; `source` names where they came from in errors."""
    rates: dict[str, float] = {}
    for item in items:
        skill, _, value = item.partition("=")
        try:
            rate = float(value)
        except ValueError:
            raise ConceptAgentError(f"{source} takes SKILL=P, e.g. pick=0.2; got {printable(item)!r}") from None
        if not math.isfinite(rate) or not 0.0 <= rate <= 1.0:
            raise ConceptAgentError(f"{source} {printable(item)}: P must be in [0, 1]")
        if skill not in skills:
            raise ConceptAgentError(f"{source} {printable(item)}: no skill '{printable(skill)}'; "
                                    f"skills are {', '.join(skills)}")
        rates[skill] = rate
    return rates
