"""Figures as the EAI reports print them."""
from __future__ import annotations


def share(pair: tuple[int, int]) -> str:
    """Goals met of goals stated: `12/15 (80%)`."""
    return f"{pair[0]}/{pair[1]} ({pair[0] / pair[1]:.0%})" if pair[1] else "-"
