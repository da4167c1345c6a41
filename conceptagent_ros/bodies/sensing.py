"""How a physical body senses the world: `--sensing ideal|realistic`. Each body has its own default
(body_sensing): the household body's is realistic (since 2026-12-04: `make body-demo`'s fridge
opens with it, and the tests that build the body on its default pass with it; a test about
something other than the senses says `ideal` where it needs the simulator's truth), the tabletop's
cameras see as rendered (their noise is not modelled yet), and the symbolic world has no sensors.

- `ideal`: the simulator's own truth reaches the body: depth with no noise, the camera's and the
  base's poses as the simulator has them.
- `realistic`: what a robot's sensors give. Depth follows a published RGB-D noise model
  (perception/depth_noise.py: Nguyen, Izadi & Lovell 2012: axial noise growing with distance
  squared and toward grazing angles, lateral noise, no depth at grazing angles and on the far side
  of depth edges). The wheels slip, so the odometry drifts, and the base drives and turns by the
  pose Monte Carlo localization estimates from the odometry and the lidar's scans against the
  exported map (navigation/localization.py, navigation/pybullet_base.Localizer). All noise is
  drawn from the body's seed, so a run repeats.

Everything the robot perceives and plans is then in the frame it believes in (the camera's points
and the lens's pose, the arm's kinematic copy and its hand pose, the planner's state); physics (grips,
carrying, the judge) stays in the simulator's frame. A look takes still frames and keeps their
median (bodies/household/robot_camera.py).

Only the senses change: segmentation (which pixel shows which thing) stays the simulator's in both,
as the oracle detector's masks are, and the judge reads the simulator's truth in both.
"""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.perception.depth_noise import DepthNoise


@dataclass(frozen=True)
class Sensing:
    name: str
    depth_noise: DepthNoise | None = None  # None: the depth image as rendered
    localization: bool = False  # True: odometry that drifts, corrected by Monte Carlo localization

    @property
    def about(self) -> str:
        if self.depth_noise is None:
            return "ideal sensing (noiseless depth, true poses)"
        return ("realistic sensing (RGB-D noise after Nguyen et al. 2012"
                + (", slipping wheels and Monte Carlo localization)" if self.localization else ")"))


SENSING = {"ideal": Sensing("ideal"), "realistic": Sensing("realistic", DepthNoise(), localization=True)}
DEFAULT_SENSING = "realistic"  # the household body's, where nothing else is asked
TABLETOP_SENSING = "ideal"  # the tabletop's only senses for now


def body_sensing(body: str, setting: str, asked: str | None = None) -> str:
    """The senses a body has: `asked` where the body can honour it, else its own default (above).
    A sensing a body cannot honour is a ValueError that says why."""
    if asked is not None:
        sensing_named(asked)  # a name it does not know fails here
    if body == "symbolic":
        if asked not in (None, "ideal"):
            raise ValueError("--sensing is a physical body's: the symbolic world has no sensors to model")
        return "ideal"
    if setting == "household":
        return asked or DEFAULT_SENSING
    if asked not in (None, TABLETOP_SENSING):
        raise ValueError("--sensing realistic is the household body's for now: the tabletop's cameras see as rendered")
    return TABLETOP_SENSING


def sensing_named(name: str | Sensing) -> Sensing:
    if isinstance(name, Sensing):
        return name
    try:
        return SENSING[name]
    except KeyError:
        raise ValueError(f"sensing must be one of {', '.join(SENSING)}, not {name!r}") from None
