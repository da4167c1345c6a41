"""`conceptagent bench --suite navigation --body pybullet [--sensing ideal|realistic] [--scene S] [--out DIR]`:
in each household scene's exported world, the robot's base drives from the scene's start to where
it would stand to work on every object in turn (id order, each drive from where the last one ended).

- `--sensing ideal` (run_navigation_scene): to the layout's true box of each object, the pose
  known exactly: the approach pose (navigation/approach.py), a path on the exported map
  (navigation/path_planner.py) and the PyBullet base following it (navigation/pybullet_base.py). A
  drive succeeds when the base arrives without touching anything; whether the object's middle is
  then within the arm's reach of the approach pose is counted beside.
- `--sensing realistic` (run_perceived_navigation_scene): as a robot does it, the household body's
  own navigate_to (bodies/household/stance.py) to each thing as its mast camera saw it, through
  noisy depth, the wheels slipping and the base driving by Monte Carlo localization's estimate; a
  thing not yet seen is looked for first from its room (the map's rooms), and one never seen is
  counted apart (NOT_SEEN: shut in a fridge or a drawer). Whether the thing is then within the
  arm's reach is judged on PyBullet's truth: its box against where the shoulder really is.

Printed per drive, with the path's length against the straight line and the time it took
(simulated, and on this machine); written as results.json, results.md and episodes.csv with --out.
"""
from __future__ import annotations

import io
import math
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conceptagent_ros.evaluation.bench_files import write_bench_files
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.navigation.approach import approach_goal
from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.path_planner import costmap, plan_path
from conceptagent_ros.navigation.pybullet_base import Localizer, PyBulletBase
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.world.export import export_world
from conceptagent_ros.world.house import house
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS
from conceptagent_ros.world.spawn import start_pose

PLANNING_MARGIN = 0.05  # metres kept between the base and anything, beyond its radius (the map is 5 cm cells)
NOT_SEEN = "NOT_SEEN"  # a perceived drive's target the camera never saw: no drive to count


@dataclass(frozen=True)
class NavigationEpisode:
    scene: str
    target: str
    success: bool
    code: str  # "" on success; NO_PATH, BLOCKED or TIMEOUT
    path_length: float  # metres planned
    straight_line: float  # metres from where the base stood to the goal
    travelled: float
    sim_seconds: float
    wall_seconds: float
    planning_ms: float
    within_reach: bool  # the object's middle within the arm's reach from the approach pose
    object_distance: float  # metres from the approach pose to the object's middle
    message: str
    # with localization: metres between where the base believes it arrived and where it stands
    localization_error: float = 0.0


def run_navigation_scene(name: str, stream: TextIO | None = None, targets: Sequence[str] | None = None,
                         gui: bool = False, localization: bool = False, seed: int = 0) -> list[NavigationEpisode]:
    """`localization`: the wheels slip and the base drives by the pose Monte Carlo localization
    estimates (navigation/localization.py); each drive starts from where it believes it stands."""
    home = house(load_scene(name))
    scene, boxes, plan = home.scene, home.boxes, home.plan
    cm = costmap(home.grid, FOOTPRINT_RADIUS + PLANNING_MARGIN)
    exported = export_world(home, Path(tempfile.mkdtemp(prefix="conceptagent_nav_")))
    x, y, yaw = start_pose(home)
    base = PyBulletBase(exported.sdf, Pose2D(x, y, yaw), gui=gui)
    if localization:
        base.localizer = Localizer.start(home.grid, Pose2D(x, y, yaw), seed)
    episodes: list[NavigationEpisode] = []
    try:
        for oid in (targets if targets is not None else sorted(scene.objects)):
            box = boxes[oid]
            here = base.believed
            started = time.perf_counter()
            try:
                approach = approach_goal(cm, plan.walls, (box.center[0], box.center[1]), box.size, (here.x, here.y))
                goal = approach.pose
                path = plan_path(cm, (here.x, here.y), (goal.x, goal.y))
            except NavigationError as e:
                episodes.append(NavigationEpisode(name, oid, False, e.code, 0.0, 0.0, 0.0, 0.0,
                                                  time.perf_counter() - started, 1000 * (time.perf_counter() - started),
                                                  False, 0.0, e.detail))
            else:
                planning_ms = 1000 * (time.perf_counter() - started)
                result = base.drive(path, goal.yaw)
                straight = math.dist((here.x, here.y), path.goal)
                truth, believed = base.pose, base.believed
                episodes.append(NavigationEpisode(name, oid, result.reached, result.code, path.length, straight,
                                                  result.travelled, result.seconds, time.perf_counter() - started,
                                                  planning_ms, approach.within_reach, approach.distance,
                                                  result.message, math.dist((truth.x, truth.y), (believed.x, believed.y))))
                if not result.reached:  # start the next drive from a free spot, as a person would reset it
                    base.place(Pose2D(x, y, yaw))
                    if localization:  # and tell the robot where, as AMCL's initial pose is set
                        base.localizer = Localizer.start(home.grid, Pose2D(x, y, yaw), seed + len(episodes))
            _report(stream, name, episodes)
    finally:
        base.close()
    return episodes


def run_perceived_navigation_scene(name: str, stream: TextIO | None = None, targets: Sequence[str] | None = None,
                                   seed: int = 0, sensing: str = "realistic") -> list[NavigationEpisode]:
    """Every thing of the scene in id order, driven to as the household body perceives it (see the
    module's docstring). `object_distance` is then PyBullet's: from the shoulder's true position
    to the nearest point of the thing's box, and `within_reach` compares it with the arm's reach."""
    import numpy as np

    from conceptagent_ros.bodies.household.body import HouseholdBody
    from conceptagent_ros.skills.contract import SkillCall

    scene = load_scene(name)
    body = HouseholdBody(scene, seed=seed, log=io.StringIO(), sensing=sensing)
    p, c = body.p, body.client
    reach = body.spec_at_origin.arm.reach
    episodes: list[NavigationEpisode] = []
    try:
        for oid in (targets if targets is not None else sorted(scene.objects)):
            started = time.perf_counter()
            if oid not in body.sight.memory:  # look for it from its room first, as a planner would send it
                body.execute(SkillCall("navigate_to", (scene.objects[oid].room,)))
            if oid not in body.sight.memory:
                episodes.append(NavigationEpisode(name, oid, False, NOT_SEEN, 0.0, 0.0, 0.0, 0.0,
                                                  time.perf_counter() - started, 0.0, False, 0.0,
                                                  f"{oid} was not seen from its room ({scene.objects[oid].room})"))
            else:
                here = body.base.believed
                body.stance.last_drive = None
                outcome = body.execute(SkillCall("navigate_to", (oid,)))
                drive, path = body.stance.last_drive, body.stance.last_path
                length = sum(math.dist(a, b) for a, b in zip(path, path[1:])) if drive is not None else 0.0
                straight = math.dist((here.x, here.y), path[-1]) if drive is not None and path else 0.0
                shoulder = body.shoulder_at(body.base.pose)
                lo, hi = (np.asarray(v) for v in p.getAABB(body.base.bodies[oid], -1, physicsClientId=c))
                distance = float(np.linalg.norm(np.clip(shoulder, lo, hi) - shoulder))
                reached = outcome.success or outcome.code == "OUT_OF_REACH"  # it arrived, as near as the map allows
                truth, believed = body.base.pose, body.base.believed
                episodes.append(NavigationEpisode(
                    name, oid, reached, "" if reached else (outcome.code or outcome.kind), length, straight,
                    drive.travelled if drive is not None else 0.0, drive.seconds if drive is not None else 0.0,
                    time.perf_counter() - started, 0.0, reached and distance <= reach, distance, outcome.message,
                    math.dist((truth.x, truth.y), (believed.x, believed.y))))
            _report(stream, name, episodes)
    finally:
        body.close()
    return episodes


def _report(stream: TextIO | None, name: str, episodes: Sequence[NavigationEpisode]) -> None:
    if stream is None:
        return
    last = episodes[-1]
    done = sum(ep.success for ep in episodes)
    stream.write(f"[{len(episodes):>3}] {name:<15} {last.target:<20} {'ok  ' if last.success else last.code:<8} "
                 f"path {last.path_length:5.2f} m (straight {last.straight_line:5.2f} m)  "
                 f"{last.sim_seconds:5.1f} s simulated, {last.wall_seconds:4.2f} s here  "
                 f"({done}/{len(episodes)} so far){'' if last.success else '  ' + last.message}\n")
    stream.flush()


def summary(episodes: Sequence[NavigationEpisode]) -> dict:
    """The drives' figures; a target never seen (NOT_SEEN) is no drive, and is counted apart."""
    unseen = [e for e in episodes if e.code == NOT_SEEN]
    episodes = [e for e in episodes if e.code != NOT_SEEN]
    wins = sum(e.success for e in episodes)
    low, high = wilson(wins, len(episodes))
    moved = [e for e in episodes if e.success and e.straight_line > 0.3]
    return {"drives": len(episodes), "reached": wins, "success_rate": wins / max(1, len(episodes)),
            "wilson_95": [low, high],
            "path_over_straight_line_median": statistics.median(e.path_length / e.straight_line for e in moved)
            if moved else None,
            "sim_seconds_median": statistics.median(e.sim_seconds for e in episodes if e.success) if wins else None,
            "planning_ms_median": statistics.median(e.planning_ms for e in episodes) if episodes else None,
            "reached_within_arms_reach": sum(e.success and e.within_reach for e in episodes),
            "localization_error_median": statistics.median(e.localization_error for e in episodes if e.success)
            if wins else None,
            "localization_error_max": max((e.localization_error for e in episodes if e.success), default=None),
            "failures_by_code": dict(Counter(e.code for e in episodes if not e.success)),
            "not_seen": len(unseen)}


def write_results(episodes: Sequence[NavigationEpisode], out: Path, command: str, perceived: bool = False) -> list[Path]:
    """`perceived`: the episodes are run_perceived_navigation_scene's."""
    overall = summary(episodes)
    figures: dict[str, object] = {"command": command, "all": overall}
    located = any(e.localization_error > 0 for e in episodes)
    if perceived:
        how = ("the household body's own navigate_to to each thing as its mast camera saw it (noisy depth, the "
               "wheels slipping, the base driving by Monte Carlo localization's estimate), a thing not yet seen "
               "looked for from its room first; a drive succeeds when the base arrives touching nothing, and the "
               "thing is within the arm's reach when PyBullet's box of it is within reach of the shoulder's true "
               f"position. Things never seen from their room (shut in a fridge or a drawer, or out of sight): "
               f"{overall['not_seen']}, not counted as drives; the planning time is not measured apart")
    else:
        how = ("the approach pose of each object's true box in id order; a drive succeeds when the base arrives "
               "touching nothing" + (", arrival judged on where Monte Carlo localization puts it, the wheels slipping "
                                     "(the error between that and where PyBullet has it is below)" if located
                                     else ", its pose known exactly"))
    lines = [f"# The base driving to every object in the exported worlds\n\nMade by `{command}` on "
             f"{time.strftime('%Y-%m-%d')}: conceptagent_mm's base in PyBullet, from the scene's start: {how}.\n",
             "| scene | drives | reached | 95% interval | object within the arm's reach | path / straight line (median) | "
             "simulated s (median) | planning ms (median) | failures |", "|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for scene in sorted({e.scene for e in episodes}) + ["all"]:
        mine = [e for e in episodes if scene in ("all", e.scene)]
        s = summary(mine)
        figures[scene] = s
        ratio = f"{s['path_over_straight_line_median']:.2f}" if s["path_over_straight_line_median"] else "-"
        sim = f"{s['sim_seconds_median']:.1f}" if s["sim_seconds_median"] else "-"
        label = f"**{s['success_rate']:.0%}**" if scene == "all" else f"{s['success_rate']:.0%}"
        lines.append(f"| {scene} | {s['drives']} | {label} | {percent_interval(*s['wilson_95'])} | "
                     f"{s['reached_within_arms_reach']} | {ratio} | {sim} | "
                     f"{'-' if perceived else format(s['planning_ms_median'], '.1f')} | {s['failures_by_code'] or 'none'} |")
    if located:
        s = overall
        lines += ["", f"Localization error on arrival: {100 * s['localization_error_median']:.1f} cm at the median, "
                  f"{100 * s['localization_error_max']:.1f} cm at most."]
    far = [e for e in episodes if e.success and not e.within_reach]
    if far:
        lines += ["", "## Reached, but the object is beyond the arm's reach from there", "",
                  "Furniture keeps the base further off than the arm reaches (things at the back of a counter with a "
                  "cabinet in front of it): the base drove as near as it could get.", ""]
        lines += [f"- {e.scene} {e.target}: {e.object_distance:.2f} m from "
                  + ("the shoulder to its nearest point" if perceived else "its middle") for e in far]
    unseen = [e for e in episodes if e.code == NOT_SEEN]
    if unseen:
        lines += ["", "## Never seen", ""] + [f"- {e.scene} {e.target}: {e.message}" for e in unseen]
    failed = [e for e in episodes if not e.success and e.code != NOT_SEEN]
    if failed:
        lines += ["", "## Failed drives", ""] + [f"- {e.scene} {e.target}: {e.code}: {e.message}" for e in failed]
    return write_bench_files(out, figures, "\n".join(lines) + "\n", episodes)
