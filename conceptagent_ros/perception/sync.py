"""Approximate-time pairing of RGB, depth and pose streams, as message_filters'
ApproximateTimeSynchronizer does, for where message_filters is not installed (pip-only installs)
and for bag replay. Each stream keeps a bounded queue: a flood of frames drops the oldest and never
grows without bound."""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ApproximateSync:
    """Calls `callback(*messages)` with one message per stream whose stamps all lie within `slop`
    seconds of each other; every message older than a matched set is dropped."""

    streams: int
    callback: Callable[..., None]
    slop: float = 0.05
    queue_size: int = 10
    _queues: list[deque[tuple[float, Any]]] = field(default_factory=list, repr=False)
    dropped: int = 0

    def __post_init__(self) -> None:
        if self.streams < 1 or self.queue_size < 1 or self.slop < 0:
            raise ValueError("streams and queue_size must be >= 1 and slop >= 0")
        self._queues = [deque() for _ in range(self.streams)]

    def add(self, stream: int, stamp: float, message: Any) -> bool:
        """Offer one message; True when it completed a set (the callback has run)."""
        queue = self._queues[stream]
        if len(queue) >= self.queue_size:
            queue.popleft()
            self.dropped += 1
        queue.append((stamp, message))
        return self._match()

    def _match(self) -> bool:
        if any(not q for q in self._queues):
            return False
        # The newest message of the stream that is furthest behind pins the set: pick, in every
        # other stream, the message closest to it in time
        pivot = min(q[-1][0] for q in self._queues)
        chosen: list[tuple[float, Any]] = []
        for q in self._queues:
            best = min(q, key=lambda item: abs(item[0] - pivot))
            if abs(best[0] - pivot) > self.slop:
                # no partner close enough yet; throw away what can never be matched any more
                while q and q[0][0] < pivot - self.slop:
                    q.popleft()
                    self.dropped += 1
                return False
            chosen.append(best)
        for q, (stamp, _) in zip(self._queues, chosen, strict=True):
            while q and q[0][0] <= stamp:
                q.popleft()
        self.callback(*(m for _, m in chosen))
        return True


def nearest(stamps: Sequence[float], stamp: float) -> int:
    """Index of the closest stamp in a sorted sequence."""
    import bisect

    i = bisect.bisect_left(stamps, stamp)
    if i == 0:
        return 0
    if i == len(stamps):
        return len(stamps) - 1
    return i if stamps[i] - stamp < stamp - stamps[i - 1] else i - 1
