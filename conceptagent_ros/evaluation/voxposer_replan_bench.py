"""Full-replan benchmark: map re-evaluation in the sandbox plus planning, at 100^3, for the
reference and the fast planner on the same snapshots, in Hz and as their ratio (one run).

    python -m conceptagent_ros.evaluation.voxposer_replan_bench [--repeats N]      (also: make voxposer-bench)
"""
from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np

from conceptagent_ros.voxposer.api import WORKER_RUNNER
from conceptagent_ros.voxposer.executor import evaluate_maps
from conceptagent_ros.voxposer.lmps import OfflineWriter, ProgramBook, ProgramCache
from conceptagent_ros.voxposer.offline import composer
from conceptagent_ros.voxposer.planners import FastPlanner, PathPlanner, ReferencePlanner
from conceptagent_ros.voxposer.sandbox import Sandbox
from conceptagent_ros.voxposer.tabletop import Tabletop
from conceptagent_ros.voxposer.task_templates import make_task

CASES = ((9, "keep away from a block"), (1, "stay on one side of a block"), (0, "move beside a block"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    os.environ.setdefault("CONCEPTAGENT_VOXPOSER_CACHE", "off")
    planners: dict[str, PathPlanner] = {"reference": ReferencePlanner(), "fast": FastPlanner()}
    totals = {name: 0.0 for name in planners}
    evaluate_total, count = 0.0, 0
    worst: list[float] = []
    with Sandbox(WORKER_RUNNER) as box:
        for template, label in CASES:
            task = make_task(template, 0)
            with Tabletop(task.scene) as env:
                snapshot = env.observe()
                book = ProgramBook(OfflineWriter(), ProgramCache(None))
                queries = dict(re.findall(r"get_(\w+)_map\('([^']+)'\)", composer(task.instruction)))
                evaluate_maps(book, box, snapshot, "gripper", queries)  # writes the programs once, like the first replan
                per: dict[str, list[float]] = {name: [] for name in planners}
                for _ in range(args.repeats):
                    for name, planner in planners.items():
                        t0 = time.perf_counter()
                        movable, maps = evaluate_maps(book, box, snapshot, "gripper", queries)
                        t1 = time.perf_counter()
                        planner.optimize(movable[2], maps["affordance"], maps.get("avoidance", np.zeros((100, 100, 100))))
                        t2 = time.perf_counter()
                        per[name].append(t2 - t0)
                        evaluate_total += (t1 - t0) / len(planners)
                    count += 1
                for name in planners:
                    totals[name] += float(np.median(per[name]))
                ref, fast = np.median(per["reference"]), np.median(per["fast"])
                worst.append(float(1 / fast))
                print(f"{label:<30} reference {1 / ref:6.1f} Hz   fast {1 / fast:6.1f} Hz   ratio {ref / fast:5.1f}x")
    ref_hz, fast_hz = len(CASES) / totals["reference"], len(CASES) / totals["fast"]
    print(f"{'all (median per case)':<30} reference {ref_hz:6.1f} Hz   fast {fast_hz:6.1f} Hz   "
          f"ratio {fast_hz / ref_hz:5.1f}x   (map re-evaluation alone: {1000 * evaluate_total / count:.1f} ms)")
    slowest = min(worst)
    print(f"bar: fast >= 30 Hz on this CPU in every case (slowest {slowest:.1f} Hz): "
          f"{'met' if slowest >= 30 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
