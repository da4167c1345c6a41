"""make_body: the one place that chooses and builds a body from a scene and the caller's settings.

- `body="symbolic"`: the embedded world's robot; skills change its symbols (sim/world.py).
  `perception="camera"`: it sees through synthetic RGB-D frames fused into a 3D object map
  (bodies/embedded/perceiving_robot.py).
- `body="pybullet"` in a household scene: conceptagent_mm in the scene's exported world
  (bodies/household/body.py). `perception="truth"`: its own view of what its mast camera segments;
  `"camera"`: those images through the perception pipeline into the robot's belief
  (bodies/household/perceiving_body.py); `"external"`: the images go to whoever sets the body's frame sink
  (a ROS perception node), and the first look around waits for the caller.
- `body="pybullet"` at the tabletop: the arm at the table the scene lays out, seen by its own cameras
  (bodies/tabletop/tabletop_body.py).
"""
from __future__ import annotations

from collections.abc import Mapping

from conceptagent_ros.bodies.body import Body
from conceptagent_ros.bodies.sensing import body_sensing
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.sim.world import World

BODIES = ("symbolic", "pybullet")
PERCEPTION = ("truth", "camera", "external")


def make_body(scene: Scene, body: str = "symbolic", perception: str = "truth", *, world: World | None = None,
              seed: int = 0, gui: bool = False, failure_rates: Mapping[str, float] | None = None,
              arm: str = "panda", sensing: str | None = None) -> Body:
    """The body for `scene`. `world`: the embedded world a symbolic body acts in (built here when not
    given); `arm`: the tabletop's robot (config/manipulation/<arm>.yaml); `sensing`: the body's
    senses, None for its own (bodies/sensing.body_sensing). A
    setting a body cannot honour is a ValueError that says which."""
    if body not in BODIES:
        raise ValueError(f"body must be one of {', '.join(BODIES)}, not {body!r}")
    if perception not in PERCEPTION:
        raise ValueError(f"perception must be one of {', '.join(PERCEPTION)}, not {perception!r}")
    sensing = body_sensing(body, scene.setting, sensing)  # one it cannot honour fails here, before anything is built
    if body == "symbolic":
        return _symbolic(scene, perception, world, seed, failure_rates)
    if failure_rates:
        raise ValueError("--body pybullet fails only as physics has it: leave out --failure-rate")
    if scene.setting == "household":
        return _household(scene, perception, seed, gui, sensing)
    if perception != "truth":
        raise ValueError("--body pybullet on the tabletop sees through the arm's own cameras: leave out --perception")
    from conceptagent_ros.bodies.tabletop.tabletop_body import TabletopBody

    tabletop = TabletopBody(scene, seed=seed, gui=gui, robot=arm)
    return Body("tabletop", tabletop, tabletop.judged_state, physical=tabletop)


def _symbolic(scene: Scene, perception: str, world: World | None, seed: int,
              failure_rates: Mapping[str, float] | None) -> Body:
    world = world if world is not None else World(scene, seed=seed, failure_rates=dict(failure_rates or {}))
    if perception == "external":
        raise ValueError("the embedded world has no camera images to send out: perception truth or camera")
    if perception == "camera":
        from conceptagent_ros.bodies.embedded.perceiving_robot import PerceivingRobot

        return Body("symbolic", PerceivingRobot(world, seed=seed), world.state)
    return Body("symbolic", world, world.state)


def _household(scene: Scene, perception: str, seed: int, gui: bool, sensing: str) -> Body:
    from conceptagent_ros.bodies.household.body import HouseholdBody

    # with its images going elsewhere, the first look waits for whoever takes them (it is the only
    # one, so a run repeats exactly)
    household = HouseholdBody(scene, seed=seed, gui=gui, look_first=perception == "truth", sensing=sensing)
    senses = household
    if perception == "camera":
        from conceptagent_ros.bodies.household.perceiving_body import PerceivingBody

        senses = PerceivingBody(household)  # type: ignore[assignment]
    return Body("household", senses, household.judged_state, physical=household, mobile=True,
                symbolic_predicates=household.symbolic_predicates)
