"""`conceptagent voxposer`: one VoxPoser instruction on the PyBullet tabletop."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import EXIT_FAILED, EXIT_OK, printable


def add_parsers(sub: Any) -> None:
    vox = sub.add_parser("voxposer", help="one VoxPoser instruction on the PyBullet tabletop (Franka Panda)")
    vox.add_argument("instruction")
    vox.add_argument("--llm", default="offline", help="offline (the offline composer) | openai:MODEL | local[:NAME]")
    vox.add_argument("--gui", action="store_true", help="open PyBullet's window")
    vox.add_argument("--planner", choices=["fast", "reference"], default="fast")
    vox.add_argument("--template", type=int, default=None,
                     help="scene of this task template (1-13, Table 4 order); default: picked from the instruction")
    vox.add_argument("--seed", type=int, default=0, help="scene layout seed")
    vox.add_argument("--out", default="voxposer_run", help="directory for value_maps.png, trajectory.png, programs.txt")
    vox.set_defaults(func=cmd_voxposer)



def cmd_voxposer(args: argparse.Namespace) -> int:
    from conceptagent_ros.voxposer.session import make_writer, run_on_tabletop, scene_for

    instruction = printable(args.instruction, 500)
    scene, judge = scene_for(args.instruction, args.template, args.seed)
    episode = run_on_tabletop(args.instruction, scene, make_writer(args.llm), planner=args.planner, gui=args.gui,
                              progress=lambda line: print("  " + line, flush=True), judge=judge,
                              pictures=Path(args.out))
    report = episode.report
    print(f"{'done' if report.success else 'stopped'}: {instruction}: {report.message}")
    if report.replans:
        print(f"{len(report.replans)} replans at {report.replan_hz:.0f} Hz (map re-evaluation + planning), "
              f"{report.llm_writes} programs written")
    if judge is not None:
        print(f"task check: {'success' if episode.judged else 'failure'}: {episode.verdict}")
    print(f"pictures and programs in {args.out}/")
    return EXIT_OK if report.success and episode.judged else EXIT_FAILED
