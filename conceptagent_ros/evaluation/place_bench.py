"""Pick and place on the physical Panda: an object is picked (as in grasp_bench) and put into a
small tray standing on the table, the spot chosen by the place planner from the tray's points as
the cameras see them. The judge reads PyBullet's ground truth only: once the hand has let go and
withdrawn and the world has settled, the object's centre lies within the tray's walls and its
lowest point below their top (in the tray, not on a wall), and the hand holds nothing.

Run with `conceptagent bench --suite place [--objects SPEC] [--seeds N] [--out DIR]`.
"""
from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld, TraySpec
from conceptagent_ros.evaluation.bench_files import write_bench_files
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.manipulation.clouds import as_resting
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.grasp_planner import GraspPlanner
from conceptagent_ros.manipulation.pick_executor import PickConfig, PickExecutor
from conceptagent_ros.manipulation.place_executor import HeldObject, place
from conceptagent_ros.manipulation.place_planner import PlacePlanner
from conceptagent_ros.manipulation.robot_spec import load_robot_spec

TRAY = TraySpec(centre=(0.45, -0.27))


@dataclass(frozen=True)
class PlaceEpisode:
    object: str
    seed: int
    success: bool  # the judge's verdict
    code: str  # the failing step's code; JUDGE_OUTSIDE when the robot said placed and the judge did not
    planning_ms: float  # the place planner's time
    message: str


def judge_placed(world: GraspWorld, name: str, tray: TraySpec) -> tuple[bool, str]:
    """From PyBullet's ground truth, after the world has settled for a second."""
    table = world.table
    table.step(240)
    p, c = table.p, table.client
    lower, upper = p.getAABB(table.things[name], physicsClientId=c)
    centre = (np.asarray(lower) + np.asarray(upper)) / 2
    if not tray.inside(centre):
        return False, f"its centre ({centre[0]:.3f}, {centre[1]:.3f}) is outside the tray's walls"
    if lower[2] > tray.wall_height:
        return False, f"it rests {lower[2] * 100:.1f} cm up, on the tray's rim rather than in it"
    if upper[2] > 0.35:
        return False, "it is still up in the air (held?)"
    return True, "in the tray"


def run_place_episode(name: str, seed: int, sensing: str = "ideal") -> PlaceEpisode:
    spec = load_robot_spec("panda")
    world = GraspWorld([name], seed, tray=TRAY, sensing=sensing)
    try:
        clouds = world.perceive()
        scene = np.concatenate([clouds.get("table", np.zeros((0, 3))), clouds.get("tray", np.zeros((0, 3)))])
        try:
            if name not in clouds:
                raise ManipulationError("EMPTY_CLOUD", f"the cameras see no point of {name}")
            seen, support_z = as_resting(clouds[name], scene)  # as the bodies' picks plan (arm_skills)
            plan = GraspPlanner(spec.gripper, spec.arm, world.kinematics.reachable).plan(seen, scene,
                                                                                        support_z=support_z)
        except ManipulationError as e:
            return PlaceEpisode(name, seed, False, e.code, 0.0, e.detail)
        config = PickConfig()
        picked = PickExecutor(world.hand(), spec.gripper, config).pick(plan, partial(world.locate, name))
        if not picked.success or picked.grasp is None:
            return PlaceEpisode(name, seed, False, picked.code, 0.0, f"pick: {picked.message}")
        now = world.perceive()
        started = time.perf_counter()
        try:
            held = HeldObject.from_points(now.get(name, np.zeros((0, 3))))
            # the spot from the tray's points as the cameras see them (the planner aims at their
            # middle), never from where the bench built the tray
            spot = PlacePlanner().plan(held.footprint_radius, held.height, now.get("tray"))
        except ManipulationError as e:
            return PlaceEpisode(name, seed, False, e.code, (time.perf_counter() - started) * 1000, e.detail)
        planning_ms = (time.perf_counter() - started) * 1000
        hand = picked.grasp.position + np.array([0.0, 0.0, config.lift])
        done = place(world.hand(), spec.gripper, hand, picked.grasp.rotation, held, spot)
        if not done.success:
            return PlaceEpisode(name, seed, False, done.code, planning_ms, done.message)
        ok, why = judge_placed(world, name, TRAY)
        return PlaceEpisode(name, seed, ok, "" if ok else "JUDGE_OUTSIDE", planning_ms, why)
    finally:
        world.close()


def run_place_bench(objects: Sequence[str], seeds: int, stream,  # noqa: ANN001 - a text stream
                    sensing: str = "ideal") -> list[PlaceEpisode]:
    episodes: list[PlaceEpisode] = []
    jobs = [(o, s) for s in range(seeds) for o in objects]
    started = time.perf_counter()
    for index, (name, seed) in enumerate(jobs, 1):
        episode = run_place_episode(name, seed, sensing)
        episodes.append(episode)
        eta = (time.perf_counter() - started) / index * (len(jobs) - index)
        stream.write(f"[{index:>4}/{len(jobs)}] seed {seed} {name}: {'ok' if episode.success else episode.code}  "
                     f"({sum(e.success for e in episodes)}/{index} so far, eta {eta:.0f} s)\n")
        stream.flush()
    return episodes


def write_results(episodes: Sequence[PlaceEpisode], out: Path, command: str) -> list[Path]:
    n, wins = len(episodes), sum(e.success for e in episodes)
    low, high = wilson(wins, n)
    planning = sorted(e.planning_ms for e in episodes if e.planning_ms > 0)
    figures = {"command": command, "episodes": n, "successes": wins, "success_rate": wins / n if n else 0.0,
               "wilson_95": [low, high], "failures_by_code": dict(Counter(e.code for e in episodes if not e.success)),
               "place_planning_ms_median": statistics.median(planning) if planning else None}
    failures = "".join(f"| {code} | {count} |\n" for code, count in sorted(figures["failures_by_code"].items()))
    markdown = (f"# Pick and place into a tray on the physical Panda\n\nMade by `{command}` on "
                 f"{time.strftime('%Y-%m-%d')}; judged on PyBullet's ground truth (the object's centre within the "
                 "tray's walls, its lowest point below their top, after the hand let go and withdrew).\n\n"
                 f"**{wins}/{n} placed ({figures['success_rate']:.0%}, 95% {percent_interval(low, high)})**; place "
                 f"planning median {figures['place_planning_ms_median'] or 0:.1f} ms.\n\n"
                + (f"| failure | count |\n|---|---:|\n{failures}" if failures else ""))
    return write_bench_files(out, figures, markdown, episodes)
