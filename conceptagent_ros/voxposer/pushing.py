"""Moving an object by pushing: a planar pushing model and random-shooting MPC over it.

When a composer program's movable is an object ("push the blue block to ..."), VoxPoser plans a
path for the object's centre on the value maps (the same planners as for the gripper) and needs
a controller that makes the object follow it. The paper learns the object's dynamics from
interaction and picks pushes by MPC; here the dynamics are a quasi-static point-push model of a
block on a table, and the MPC is random shooting: sample pushes (where to touch the block, which
way, how far), predict where each leaves the block, keep the one whose prediction lands nearest
the next point of the object's path at the lowest avoidance cost. The loop observes the block
again after every push, so the model only needs to be right on average.

The model: a pusher moving in direction `d` touches the block's rim at angle `theta`; the block
translates along `d` by the distance travelled past contact, scaled by cos^2 of the angle between
`d` and the contact normal (an off-centre push slides and turns the block rather than moving it).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Push:
    contact: np.ndarray  # (2,) world xy where the pusher meets the block's rim
    direction: np.ndarray  # (2,) unit
    distance: float  # metres the pusher travels past contact
    predicted: np.ndarray  # (2,) the block's centre after the push, by the model

    def pre_contact(self, clearance: float) -> np.ndarray:
        return self.contact - self.direction * clearance

    def end(self) -> np.ndarray:
        return self.contact + self.direction * self.distance


@dataclass(frozen=True)
class PushModel:
    samples: int = 400
    min_distance: float = 0.01
    max_distance: float = 0.06
    max_skew: float = 0.6  # radians between the push direction and the contact normal

    def predict(self, centre: np.ndarray, normal_angle: np.ndarray, skew: np.ndarray, distance: np.ndarray) -> np.ndarray:
        """Centres after pushes (vectorised over samples): normal_angle is the direction from the
        contact point into the block, skew the push direction's angle from it."""
        heading = normal_angle + skew
        travel = distance * np.cos(skew) ** 2
        return centre + np.stack([np.cos(heading), np.sin(heading)], axis=-1) * travel[:, None]

    def choose(self, centre: np.ndarray, radius: float, goal: np.ndarray, cost: Callable[[np.ndarray], np.ndarray],
               rng: np.random.Generator, reachable: Callable[[np.ndarray], np.ndarray] | None = None,
               clearance: float = 0.03) -> Push:
        """The sampled push whose predicted centre is nearest `goal`, plus `cost` (avoidance) there;
        with `reachable` (xy points -> bool), among those whose approach (`clearance` before the
        contact) and end the hand can reach, when any can."""
        n = self.samples
        normal_angle = rng.uniform(-np.pi, np.pi, n)
        skew = rng.uniform(-self.max_skew, self.max_skew, n)
        distance = rng.uniform(self.min_distance, self.max_distance, n)
        predicted = self.predict(centre, normal_angle, skew, distance)
        score = np.linalg.norm(predicted - goal, axis=1) + cost(predicted) + 0.1 * np.abs(skew) * distance
        inward = np.stack([np.cos(normal_angle), np.sin(normal_angle)], axis=1)
        heading = normal_angle + skew
        direction = np.stack([np.cos(heading), np.sin(heading)], axis=1)
        contact = centre - inward * radius
        if reachable is not None:
            ok = reachable(contact - direction * clearance) & reachable(contact + direction * distance[:, None])
            if ok.any():
                score = np.where(ok, score, np.inf)
        best = int(np.argmin(score))
        return Push(contact=contact[best], direction=direction[best], distance=float(distance[best]),
                    predicted=predicted[best])
