"""Opening and closing drawers on the physical Panda: `conceptagent bench --suite drawer [--seeds N]
[--out DIR]`. The tabletop's cabinet (three drawers with handle bars) stands on the table; each
episode opens a closed drawer by 10 cm, or closes one that stands 7-11 cm open. The drawer's points
as the cameras see them give the plan (articulation_planner); how far it is open is measured from
its front against a closed neighbour's, not assumed. The judge reads the drawer's joint from
PyBullet: open means at least 7 cm out, closed at most 1.5 cm.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
from conceptagent_ros.evaluation.bench_files import write_bench_files
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.manipulation.articulation_executor import carry_out
from conceptagent_ros.manipulation.articulation_planner import drawer_opening, front_geometry, plan_drawer
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.robot_spec import load_robot_spec
from conceptagent_ros.voxposer.tabletop import DRAWER_NAMES, CabinetSpec

DRAWERS = DRAWER_NAMES[3]
OPEN_BY = 0.10
OPEN_ENOUGH, CLOSED_ENOUGH = 0.07, 0.015
CABINET_FRONT_X = 0.72  # far enough out for the hand to point forward at the lowest handle
TABLE_TOP = 0.0


@dataclass(frozen=True)
class DrawerEpisode:
    drawer: str
    action: str
    seed: int
    success: bool  # the judge's verdict
    code: str
    measured_before: float  # the opening as measured from the points before acting (m)
    opening_after: float  # the judge's reading of the joint (m)
    message: str


def run_drawer_episode(drawer: str, action: Literal["open", "close"], seed: int) -> DrawerEpisode:
    rng = np.random.default_rng(seed)
    index = DRAWERS.index(drawer)
    opening = [0.0, 0.0, 0.0]
    if action == "close":
        opening[index] = float(rng.uniform(0.07, 0.11))
    spec = load_robot_spec("panda")
    world = GraspWorld([], seed, cabinet=CabinetSpec(front_x=CABINET_FRONT_X, opening=tuple(opening), handles=True))
    try:
        clouds = world.perceive()
        neighbour = DRAWERS[(index + 1) % 3]
        measured = 0.0
        try:
            closed = front_geometry(clouds[neighbour], spec.arm.base)
            measured = drawer_opening(clouds[drawer], closed)
            distance = OPEN_BY if action == "open" else max(measured, 0.0) + 0.005
            plan = plan_drawer(clouds[drawer], spec.arm.base, spec.gripper, action, distance, floor_z=TABLE_TOP)
        except ManipulationError as e:
            return DrawerEpisode(drawer, action, seed, False, e.code, measured, world.table.drawer_opening(drawer),
                                 e.detail)
        if not carry_out(world.hand(joint_space_fallback=True), plan):
            return DrawerEpisode(drawer, action, seed, False, "UNREACHABLE", measured,
                                 world.table.drawer_opening(drawer), "the arm did not reach the handle")
        world.table.step(120)
        after = world.table.drawer_opening(drawer)
        ok = after >= OPEN_ENOUGH if action == "open" else after <= CLOSED_ENOUGH
        return DrawerEpisode(drawer, action, seed, ok, "" if ok else "JUDGE_NOT_MOVED", measured, after,
                             f"{after * 100:.1f} cm open after {'opening' if action == 'open' else 'closing'}")
    finally:
        world.close()


def run_drawer_bench(seeds: int, stream) -> list[DrawerEpisode]:  # noqa: ANN001 - a text stream
    jobs = [(d, a, s) for s in range(seeds) for a in ("open", "close") for d in DRAWERS]
    episodes: list[DrawerEpisode] = []
    started = time.perf_counter()
    for i, (drawer, action, seed) in enumerate(jobs, 1):
        e = run_drawer_episode(drawer, action, seed)  # type: ignore[arg-type]
        episodes.append(e)
        eta = (time.perf_counter() - started) / i * (len(jobs) - i)
        stream.write(f"[{i:>4}/{len(jobs)}] seed {seed} {action} {drawer}: {'ok' if e.success else e.code} "
                     f"(measured {e.measured_before * 100:.1f} cm before, {e.opening_after * 100:.1f} cm after; "
                     f"{sum(x.success for x in episodes)}/{i} so far, eta {eta:.0f} s)\n")
        stream.flush()
    return episodes


def summary_line(episodes: Sequence[DrawerEpisode]) -> str:
    parts = []
    for action in ("open", "close"):
        mine = [e for e in episodes if e.action == action]
        parts.append(f"{action} {sum(e.success for e in mine)}/{len(mine)}")
    return ", ".join(parts)


def write_results(episodes: Sequence[DrawerEpisode], out: Path, command: str) -> list[Path]:
    figures: dict = {"command": command}
    lines = [f"# Opening and closing drawers on the physical Panda\n\nMade by `{command}` on {time.strftime('%Y-%m-%d')}; "
             "judged on the drawer's joint in PyBullet (open: at least 7 cm out; closed: at most 1.5 cm).\n",
             "| action | drawer | episodes | success | 95% interval |", "|---|---|---:|---:|---|"]
    for action in ("open", "close"):
        for drawer in (*DRAWERS, "all"):
            mine = [e for e in episodes if e.action == action and drawer in ("all", e.drawer)]
            wins = sum(e.success for e in mine)
            low, high = wilson(wins, len(mine))
            figures[f"{action}/{drawer}"] = {"episodes": len(mine), "successes": wins, "wilson_95": [low, high]}
            label = f"**{wins / len(mine):.0%}**" if drawer == "all" else f"{wins / len(mine):.0%}"
            lines.append(f"| {action} | {drawer} | {len(mine)} | {label} | {percent_interval(low, high)} |")
    figures["failures_by_code"] = dict(Counter(e.code for e in episodes if not e.success))
    lines.append("")
    lines.append(f"Failures: {figures['failures_by_code'] or 'none'}.")
    return write_bench_files(out, figures, "\n".join(lines) + "\n", episodes)
