"""DDS domain ids, one per use within a process.

domain_coordinator reserves an id by binding a port, but its default selector starts again at 1 on
every call, so consecutive graphs in one process (tests, benches, `ros demo` after `ros up`) all land
on domain 1. A participant of the previous graph that is not gone yet -- a child process killed
before it could say goodbye stays in the others' graph caches until its lease runs out (20 s in Fast
DDS) -- then shows up as a second server for the same skills, and its late removal makes a live
server look absent. Walking through the ids, starting from this process's pid so that concurrent
runs start apart, gives each graph a domain nothing else has used for the last 99 reservations.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

DOMAIN_COUNT = 100  # domain_coordinator's range: 1..100

_next_offset = itertools.count(os.getpid() % DOMAIN_COUNT)


def _next_domain() -> int:
    return next(_next_offset) % DOMAIN_COUNT + 1


@contextmanager
def reserved_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other process holds and this one has not used recently, held for the block."""
    from domain_coordinator import domain_id

    with domain_id(selector=_next_domain) as reserved:
        yield reserved
