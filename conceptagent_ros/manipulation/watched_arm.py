"""An Arm (pick_executor.Arm) that a skill server can stop and follow: before every motion it
checks a cancel flag (and stops there, raising MotionCanceled), and it tells a callback which
motion it starts, for feedback per phase. The executors need not know: they drive it as any arm."""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.manipulation.pick_executor import Arm


class MotionCanceled(Exception):
    """The skill was canceled; the arm stopped before its next motion."""


@dataclass
class WatchedArm:
    arm: Arm
    cancel: threading.Event | None = None
    on_motion: Callable[[str], None] | None = None  # "moving the hand", "closing the hand", ...
    motions: int = 0

    def _next(self, what: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise MotionCanceled(f"canceled before {what}")
        self.motions += 1
        if self.on_motion is not None:
            self.on_motion(what)

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        self._next("moving the hand")
        return self.arm.move_hand(position, rotation, speed)

    def move_hand_straight(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        """In a straight line or not at all, where the arm can do that (MobileArm.move_hand_straight);
        as move_hand elsewhere."""
        self._next("moving the hand")
        straight = getattr(self.arm, "move_hand_straight", None)
        if straight is None:
            return self.arm.move_hand(position, rotation, speed)
        return bool(straight(position, rotation, speed))

    def open_hand(self) -> None:
        self._next("opening the hand")
        self.arm.open_hand()

    def close_hand(self) -> float:
        self._next("closing the hand")
        return self.arm.close_hand()

    def finger_gap(self) -> float:
        return self.arm.finger_gap()

    def fingers_feel(self) -> bool | None:
        return self.arm.fingers_feel()
