"""Opening and closing drawers on the physical Panda: `conceptagent bench --suite drawer [--seeds N]
[--out DIR]`. A cabinet of three drawers with handle bars stands on the table; each episode opens a
drawer to 10 cm or closes one that stands 5-12 cm open. Each seed draws its own cabinet
(`cabinet_for`): where it stands and how it is turned, its handles' length, thickness and standoff,
and how far each drawer starts out (the others closed or ajar). The drawer's points as the cameras
see them give the plan (articulation_planner); how far it is open is measured from its front
against the carcass's, not assumed. The judge reads the drawer's joint from PyBullet: open means at
least 7 cm out, closed at most 1.5 cm.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
from conceptagent_ros.evaluation.bench_files import write_bench_files
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.manipulation.articulation_executor import carry_out
from conceptagent_ros.manipulation.articulation_planner import FrontGeometry, drawer_opening, front_geometry, plan_drawer
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.robot_spec import load_robot_spec
from conceptagent_ros.voxposer.tabletop import DRAWER_NAMES, CabinetSpec

DRAWERS = DRAWER_NAMES[3]
OPEN_TO = 0.10
OPEN_ENOUGH, CLOSED_ENOUGH = 0.07, 0.015
TABLE_TOP = 0.0
CARCASS_EDGE = 0.99  # the quantile of the carcass's points along the front's normal taken as its front


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
    opening_before: float = 0.0  # the judge's reading of the joint before acting (m)
    cabinet: dict | None = None  # the seed's cabinet (CabinetSpec's fields)


def cabinet_for(drawer: str, action: Literal["open", "close"], seed: int) -> CabinetSpec:
    """The seed's cabinet: its front's middle 66-78 cm out and up to 15 cm aside, turned up to 20
    degrees; handle bars 8-14 cm long, 1.0-1.6 cm thick, 2.0-3.5 cm proud; the drawer to open closed
    or up to 2 cm ajar, the one to close 5-12 cm out, each other drawer closed or 1-6 cm out."""
    rng = np.random.default_rng([seed, DRAWERS.index(drawer), action == "close"])
    opening = []
    for name in DRAWERS:
        if name == drawer:
            out = float(rng.uniform(0.05, 0.12)) if action == "close" else \
                (0.0 if rng.random() < 0.5 else float(rng.uniform(0.005, 0.02)))
        else:
            out = 0.0 if rng.random() < 0.5 else float(rng.uniform(0.01, 0.06))
        opening.append(out)
    return CabinetSpec(front_x=float(rng.uniform(0.66, 0.78)), y=float(rng.uniform(-0.15, 0.15)),
                       opening=tuple(opening), handles=True, yaw=math.radians(float(rng.uniform(-20.0, 20.0))),
                       handle_length=float(rng.uniform(0.08, 0.14)), handle_thickness=float(rng.uniform(0.010, 0.016)),
                       handle_standoff=float(rng.uniform(0.020, 0.035)))


def opening_against_carcass(drawer_points: np.ndarray, carcass_points: np.ndarray, base: object) -> float:
    """How far (m) the drawer stands out of the carcass: its front's plane against the carcass's
    nearest extent along that plane's normal (the carcass's front, whatever the drawers do)."""
    front = front_geometry(drawer_points, base)
    edge = float(np.quantile(np.asarray(carcass_points, dtype=float) @ front.normal, CARCASS_EDGE))
    closed = FrontGeometry(front.plane, front.normal, front.centre + front.normal * (edge - float(front.centre @ front.normal)),
                           front.width_axis, front.half_width, front.top, None)
    return drawer_opening(drawer_points, closed)


def run_drawer_episode(drawer: str, action: Literal["open", "close"], seed: int,
                       sensing: str = "ideal") -> DrawerEpisode:
    cabinet = cabinet_for(drawer, action, seed)
    spec = load_robot_spec("panda")
    world = GraspWorld([], seed, cabinet=cabinet, sensing=sensing)
    shown = asdict(cabinet) | {"yaw_deg": round(math.degrees(cabinet.yaw), 1)}
    try:
        before = world.table.drawer_opening(drawer)
        clouds = world.perceive()
        measured = 0.0
        try:
            if drawer not in clouds or "cabinet" not in clouds:
                raise ManipulationError("NOT_SEEN", f"no camera sees the {drawer} and the cabinet")
            measured = opening_against_carcass(clouds[drawer], clouds["cabinet"], spec.arm.base)
            distance = max(OPEN_TO - measured, 0.02) if action == "open" else max(measured, 0.0) + 0.005
            plan = plan_drawer(clouds[drawer], spec.arm.base, spec.gripper, action, distance, floor_z=TABLE_TOP)
        except ManipulationError as e:
            return DrawerEpisode(drawer, action, seed, False, e.code, measured, world.table.drawer_opening(drawer),
                                 e.detail, before, shown)
        if not carry_out(world.hand(joint_space_fallback=True), plan):
            return DrawerEpisode(drawer, action, seed, False, "UNREACHABLE", measured,
                                 world.table.drawer_opening(drawer), "the arm did not reach the handle", before, shown)
        world.table.step(120)
        after = world.table.drawer_opening(drawer)
        ok = after >= OPEN_ENOUGH if action == "open" else after <= CLOSED_ENOUGH
        return DrawerEpisode(drawer, action, seed, ok, "" if ok else "JUDGE_NOT_MOVED", measured, after,
                             f"{after * 100:.1f} cm open after {'opening' if action == 'open' else 'closing'}",
                             before, shown)
    finally:
        world.close()


def run_drawer_bench(seeds: int, stream, sensing: str = "ideal") -> list[DrawerEpisode]:  # noqa: ANN001 - a text stream
    jobs = [(d, a, s) for s in range(seeds) for a in ("open", "close") for d in DRAWERS]
    episodes: list[DrawerEpisode] = []
    started = time.perf_counter()
    for i, (drawer, action, seed) in enumerate(jobs, 1):
        e = run_drawer_episode(drawer, action, seed, sensing)  # type: ignore[arg-type]
        episodes.append(e)
        eta = (time.perf_counter() - started) / i * (len(jobs) - i)
        stream.write(f"[{i:>4}/{len(jobs)}] seed {seed} {action} {drawer}: {'ok' if e.success else e.code} "
                     f"({e.opening_before * 100:.1f} cm out, measured {e.measured_before * 100:.1f} cm; "
                     f"{e.opening_after * 100:.1f} cm after; "
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
             "judged on the drawer's joint in PyBullet (open: at least 7 cm out; closed: at most 1.5 cm). Each seed "
             "draws its own cabinet (evaluation/drawer_bench.cabinet_for): where it stands, its turn, its handles "
             "and how far each drawer starts out.\n",
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
    # only where the plan was made (a failure before it leaves nothing measured)
    errors = [abs(e.measured_before - e.opening_before) for e in episodes if e.code in ("", "UNREACHABLE", "JUDGE_NOT_MOVED")]
    if errors:
        figures["opening_error_m"] = {"median": float(np.median(errors)), "max": float(np.max(errors))}
        lines.append("")
        lines.append(f"The opening measured from the points before acting, against the joint: off by "
                     f"{np.median(errors) * 1000:.1f} mm at the median, {np.max(errors) * 1000:.1f} mm at most.")
    distinct = len({(e.cabinet or {}).get("front_x") for e in episodes})
    figures["distinct_cabinets"] = distinct
    lines.append(f"{distinct} different cabinets over {len(episodes)} episodes.")
    lines.append("")
    lines.append(f"Failures: {figures['failures_by_code'] or 'none'}.")
    return write_bench_files(out, figures, "\n".join(lines) + "\n", episodes)
