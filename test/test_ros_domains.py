"""DDS domain ids shared out among runs side by side (the test suite's workers): each walks its own share."""
from __future__ import annotations

import pytest

from conceptagent_ros.ros import domains
from conceptagent_ros.ros.domains import DOMAINS_ENV, domain_range, share_of_domains


def test_two_workers_get_shares_that_cover_the_ids_without_overlap() -> None:
    shares = [domain_range(share_of_domains(k, 2)) for k in range(2)]
    assert shares == [(1, 50), (51, 100)]


def test_a_process_walks_only_its_share_and_through_all_of_it(monkeypatch) -> None:
    monkeypatch.setenv(DOMAINS_ENV, "51-60")
    walked = [domains._next_domain() for _ in range(20)]
    assert set(walked) == set(range(51, 61))
    assert all(b == a + 1 or (a, b) == (60, 51) for a, b in zip(walked, walked[1:]))  # never back to one just left


@pytest.mark.parametrize("text", ["50", "0-10", "60-51", "1-101", "a-b"])
def test_a_malformed_share_is_refused_naming_the_variable(text: str) -> None:
    with pytest.raises(ValueError, match=DOMAINS_ENV):
        domain_range(text)


def test_no_share_means_every_id() -> None:
    assert domain_range(None) == (1, 100) and domain_range("") == (1, 100)
