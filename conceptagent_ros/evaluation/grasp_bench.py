"""The physical grasping benchmark: `conceptagent bench --suite grasp [--objects SPEC] [--clutter N]
[--seeds N] [--out DIR]`.

One episode per object and seed. Single objects: the object alone on the table. Clutter N: N
objects dropped together, each picked in turn (the one picked is then taken off the table). Each
pick is planned from what the cameras see (grasp_world.GraspWorld.perceive) and carried out by the
pick executor on the physical Panda. The judge reads PyBullet's ground truth only, and shares no
code with the planners: a grasp succeeds when the object's lowest point is at least 10 cm above the
table after the lift and still is after a 2-second arm motion with the object still at the hand.

Development objects: random_urdfs 000-499, the named ones and the generated shapes numbered 0-9 of
each family (`shapes:dev`); held out: random_urdfs 500-999 and shapes 100-109 (`shapes:heldout`). The
planners special-case no object.
"""
from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TextIO

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import NAMED_OBJECTS, RANDOM_COUNT, GraspWorld
from conceptagent_ros.bodies.tabletop.shapes import parse_shape, shape_set
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.bench_files import write_bench_files
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.manipulation.clouds import as_resting
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.grasp_planner import GraspPlanner
from conceptagent_ros.manipulation.pick_executor import PickExecutor
from conceptagent_ros.manipulation.robot_spec import load_robot_spec

HELD_HEIGHT = 0.10  # metres above the table, the object's lowest point
MOTION_SECONDS = 2.0
SIDEWAYS = 0.15  # the judge's motion: this far to the side and back
TABLE_TOP = 0.0


def parse_objects(spec: str) -> list[str]:
    """`named`, `random:A-B` (random_urdfs ids, inclusive), `shapes:dev` or `shapes:heldout` (the
    generated shapes of bodies/tabletop/shapes.py), or a comma list of these and of single names
    (`duck`, `random:12`, `shape:plate:3`)."""
    objects: list[str] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part == "named":
            objects += list(NAMED_OBJECTS)
        elif part.startswith("shapes:"):
            try:
                objects += [s.name for s in shape_set(part.split(":", 1)[1])]
            except ValueError as e:
                raise ConceptAgentError(f"--objects {part!r}: {e}") from None
        elif part.startswith("shape:"):
            try:
                objects.append(parse_shape(part).name)
            except ValueError as e:
                raise ConceptAgentError(f"--objects {part!r}: {e}") from None
        elif part.startswith("random:"):
            span = part.split(":", 1)[1]
            try:
                low, high = (int(v) for v in span.split("-")) if "-" in span else (int(span), int(span))
            except ValueError as e:
                raise ConceptAgentError(f"--objects {part!r}: use random:A-B with numbers") from e
            if not 0 <= low <= high < RANDOM_COUNT:
                raise ConceptAgentError(f"--objects {part!r}: random_urdfs run 0..{RANDOM_COUNT - 1}")
            objects += [f"random:{i}" for i in range(low, high + 1)]
        elif part in NAMED_OBJECTS:
            objects.append(part)
        else:
            raise ConceptAgentError(f"--objects: unknown {part!r}; use named, random:A-B, shapes:dev, shapes:heldout "
                                    f"or names from {', '.join(NAMED_OBJECTS)}")
    if not objects:
        raise ConceptAgentError("--objects names no object")
    return objects


@dataclass(frozen=True)
class GraspEpisode:
    object: str
    seed: int
    clutter: int  # objects on the table when the episode began (1: alone)
    success: bool  # the judge's verdict
    code: str  # the planner's or executor's failure code; JUDGE_NOT_HELD when it said held and the judge did not
    attempts: int
    planning_ms: float
    points: int  # the object's points the cameras saw
    message: str


def judge_held(world: GraspWorld, name: str) -> tuple[bool, str]:
    """From PyBullet's ground truth: lowest point >= 10 cm above the table, before and after a
    2-second sideways motion of the arm, and still at the hand after it."""
    table = world.table
    p, c, body = table.p, table.client, table.things[name]

    def lowest() -> float:
        return float(p.getAABB(body, physicsClientId=c)[0][2]) - TABLE_TOP

    if lowest() < HELD_HEIGHT:
        return False, f"its lowest point is {lowest() * 100:.1f} cm above the table after the lift"
    hand = table.ee_position()
    orientation = table.ee_quaternion()
    speed = 2 * SIDEWAYS / MOTION_SECONDS / 0.25  # move_to's base speed is 0.25 m/s
    table.move_to(hand + np.array([0.0, SIDEWAYS, 0.0]), orientation, speed=speed)
    table.move_to(hand, orientation, speed=speed)
    at = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=c)[0])
    if lowest() < HELD_HEIGHT:
        return False, f"dropped during the motion (lowest point {lowest() * 100:.1f} cm above the table)"
    if float(np.linalg.norm(at - table.ee_position())) > 0.15:
        return False, "no longer at the hand after the motion"
    return True, "held through the motion"


def _clear_away(world: GraspWorld, name: str) -> None:
    """Take a picked object off the table (into a bin, as it were) and open the hand."""
    table = world.table
    table.p.resetBasePositionAndOrientation(table.things[name], [2.0 + len(name) * 0.01, 2.0, 0.1], [0, 0, 0, 1],
                                            physicsClientId=table.client)
    table.set_gripper(False)
    table.reset_to_default_pose()
    table.step(60)


def run_episode(objects: Sequence[str], seed: int, picture: Path | None = None,
                sensing: str = "ideal") -> list[GraspEpisode]:
    """Drop `objects` on the table and pick each in turn; one GraspEpisode per pick. With `picture`
    (and none there yet), the first plan's candidates are drawn on their cloud into it."""
    spec = load_robot_spec("panda")
    world = GraspWorld(list(objects), seed, sensing=sensing)
    episodes = []
    try:
        planner = GraspPlanner(spec.gripper, spec.arm, world.kinematics.reachable)
        executor = PickExecutor(world.hand(), spec.gripper)
        remaining = list(world.objects)
        for name in list(remaining):
            clouds = world.perceive()
            others = [clouds[o] for o in remaining if o != name and o in clouds]
            scene = np.concatenate([clouds.get("table", np.zeros((0, 3))), *others])
            points = len(clouds.get(name, ()))
            started = time.perf_counter()
            try:
                if not points:
                    raise ManipulationError("EMPTY_CLOUD", f"the cameras see no point of {name}")
                seen, support_z = as_resting(clouds[name], scene)  # as the bodies' picks plan (arm_skills)
                plan = planner.plan(seen, scene, support_z=support_z)
            except ManipulationError as e:
                episodes.append(GraspEpisode(name, seed, len(objects), False, e.code, 0,
                                             (time.perf_counter() - started) * 1000, points, e.detail))
                continue
            planning_ms = plan.seconds * 1000
            if picture is not None and not picture.exists():
                from conceptagent_ros.evaluation.grasp_picture import save_candidates_picture

                save_candidates_picture(clouds[name], scene, plan, spec.gripper, picture,
                                        f"{name}: {len(plan.candidates)} candidates (best in green), "
                                        f"planned in {planning_ms:.0f} ms from {points} seen points")
            result = executor.pick(plan, partial(world.locate, name))
            held, why = judge_held(world, name) if result.success else (False, result.message)
            code = result.code if not result.success else ("" if held else "JUDGE_NOT_HELD")
            episodes.append(GraspEpisode(name, seed, len(objects), held, code, result.attempts, planning_ms, points,
                                         why if result.success else result.message))
            if held or result.success:
                _clear_away(world, name)
                remaining.remove(name)
            else:
                world.table.set_gripper(False)
                world.table.reset_to_default_pose()
                world.table.step(60)
    finally:
        world.close()
    return episodes


def run_grasp_bench(objects: Sequence[str], seeds: int, clutter: int = 1, stream: TextIO | None = None,
                    on_episode: Callable[[GraspEpisode], None] | None = None,
                    picture: Path | None = None, sensing: str = "ideal") -> list[GraspEpisode]:
    stream = stream or sys.stderr
    if seeds < 1 or clutter < 1:
        raise ConceptAgentError("--seeds and --clutter must be at least 1")
    # the work: single objects, or groups of `clutter` drawn from the list (every object in some group)
    jobs: list[tuple[list[str], int]] = []
    for seed in range(seeds):
        if clutter == 1:
            jobs += [([o], seed) for o in objects]
        else:
            order = list(np.random.default_rng(seed).permutation(len(objects)))
            for start in range(0, len(order), clutter):
                group = [objects[i] for i in order[start:start + clutter]]
                while len(group) < clutter:  # the last group is topped up from the start
                    group.append(objects[order[(start + len(group)) % len(order)]])
                jobs.append((list(dict.fromkeys(group)), seed))
    episodes: list[GraspEpisode] = []
    started = time.perf_counter()
    for index, (group, seed) in enumerate(jobs, 1):
        for episode in run_episode(group, seed, picture, sensing):
            episodes.append(episode)
            if on_episode is not None:
                on_episode(episode)
        done = sum(e.success for e in episodes)
        eta = (time.perf_counter() - started) / index * (len(jobs) - index)
        last = episodes[-len(group):]
        marks = " ".join(f"{e.object}:{'ok' if e.success else e.code or 'FAIL'}" for e in last)
        stream.write(f"[{index:>4}/{len(jobs)}] seed {seed} {marks}  ({done}/{len(episodes)} so far, "
                     f"eta {eta:.0f} s)\n")
        stream.flush()
    return episodes


def object_set(name: str) -> str:
    """What a result is grouped under: random_urdfs, named, or a generated shape's family."""
    if name.startswith("random:"):
        return "random_urdfs"
    if name.startswith("shape:"):
        return f"shape {name.split(':')[1]}"
    return "named"


def summary(episodes: Sequence[GraspEpisode]) -> dict:
    n, wins = len(episodes), sum(e.success for e in episodes)
    low, high = wilson(wins, n)
    attempts = [e.attempts for e in episodes if e.success]
    planning = sorted(e.planning_ms for e in episodes if e.planning_ms > 0)
    by_set: dict[str, list[GraspEpisode]] = {}
    for e in episodes:
        by_set.setdefault(object_set(e.object), []).append(e)
    return {
        "episodes": n, "successes": wins, "success_rate": wins / n if n else 0.0,
        "wilson_95": [low, high],
        "attempts_per_success": statistics.mean(attempts) if attempts else None,
        "failures_by_code": dict(Counter(e.code for e in episodes if not e.success)),
        "planning_ms_median": statistics.median(planning) if planning else None,
        "planning_ms_p90": planning[int(0.9 * (len(planning) - 1))] if planning else None,
        "by_set": {name: {"episodes": len(es), "successes": sum(e.success for e in es),
                          "wilson_95": list(wilson(sum(e.success for e in es), len(es)))}
                   for name, es in sorted(by_set.items())},
    }


def summary_markdown(figures: dict, command: str, clutter: int) -> str:
    lines = [f"# Grasping on the physical Panda ({'single objects' if clutter == 1 else f'clutter of {clutter}'})", "",
             f"Made by `{command}` on {time.strftime('%Y-%m-%d')}. Planned from the four RGB-D cameras' points "
             "(segmentation from the simulator's masks, geometry from depth); judged on PyBullet's ground truth "
             f"(lowest point >= {HELD_HEIGHT * 100:.0f} cm above the table, held through a {MOTION_SECONDS:.0f}-second "
             "arm motion).", "",
             "| set | episodes | success | 95% interval |", "|---|---:|---:|---|"]
    for name, s in figures["by_set"].items():
        rate = s["successes"] / s["episodes"] if s["episodes"] else 0.0
        lines.append(f"| {name} | {s['episodes']} | {rate:.0%} | {percent_interval(*s['wilson_95'])} |")
    lines.append(f"| **all** | {figures['episodes']} | **{figures['success_rate']:.0%}** | "
                 f"{percent_interval(*figures['wilson_95'])} |")
    lines += ["", f"Attempts per success: {figures['attempts_per_success'] or 0:.2f}. "
                  f"Grasp planning per object: median {figures['planning_ms_median'] or 0:.1f} ms, "
                  f"90th percentile {figures['planning_ms_p90'] or 0:.1f} ms.", ""]
    if figures["failures_by_code"]:
        lines += ["| failure | count |", "|---|---:|"]
        lines += [f"| {code} | {count} |" for code, count in sorted(figures["failures_by_code"].items(),
                                                                       key=lambda kv: -kv[1])]
    return "\n".join(lines) + "\n"


def write_results(episodes: Sequence[GraspEpisode], out: Path, command: str, clutter: int) -> list[Path]:
    figures = summary(episodes)
    figures["command"] = command
    return write_bench_files(out, figures, summary_markdown(figures, command, clutter), episodes)
