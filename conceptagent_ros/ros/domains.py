"""DDS domain ids, one per use within a process.

domain_coordinator reserves an id by binding a port, but its default selector starts again at 1 on
every call, so consecutive graphs in one process (tests, benches, `ros demo` after `ros up`) all land
on domain 1. A participant of the previous graph that is not gone yet -- a child process killed
before it could say goodbye stays in the others' graph caches until its lease runs out (20 s in Fast
DDS) -- then shows up as a second server for the same skills, and its late removal makes a live
server look absent. Walking through the ids, starting from this process's pid so that concurrent
runs start apart, gives each graph a domain nothing else has used for the last 99 reservations.

CONCEPTAGENT_ROS_DOMAINS="FIRST-LAST" keeps a process (and the processes it starts) to a share of
the ids: runs side by side on one machine (the test suite's workers) then never walk into an id
another has just left while a participant of its killed graph still lingers there.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

DOMAIN_COUNT = 100  # domain_coordinator's range: 1..100
DOMAINS_ENV = "CONCEPTAGENT_ROS_DOMAINS"


def domain_range(text: str | None) -> tuple[int, int]:
    """The ids a process may use, from CONCEPTAGENT_ROS_DOMAINS ("FIRST-LAST", within 1..100); all by default."""
    if not text:
        return 1, DOMAIN_COUNT
    try:
        first, last = (int(part) for part in text.split("-"))
    except ValueError:
        raise ValueError(f"{DOMAINS_ENV}={text!r}: expected FIRST-LAST, for example 1-50") from None
    if not 1 <= first <= last <= DOMAIN_COUNT:
        raise ValueError(f"{DOMAINS_ENV}={text!r}: the ids must lie within 1-{DOMAIN_COUNT}, "
                         "the first no higher than the last")
    return first, last


def share_of_domains(worker: int, workers: int) -> str:
    """The CONCEPTAGENT_ROS_DOMAINS value for worker `worker` (from 0) of `workers` side by side."""
    size = DOMAIN_COUNT // workers
    return f"{worker * size + 1}-{(worker + 1) * size}"


_next_offset = itertools.count(os.getpid())


def _next_domain() -> int:
    first, last = domain_range(os.environ.get(DOMAINS_ENV))  # read on each use: a test suite's worker sets it late
    return first + next(_next_offset) % (last - first + 1)


@contextmanager
def reserved_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other process holds and this one has not used recently, held for the block."""
    from domain_coordinator import domain_id

    with domain_id(selector=_next_domain) as reserved:
        yield reserved
