"""`conceptagent robot urdf [--controllers FILE] [--no-gazebo] [--torso-fixed] [--out FILE]`: the mobile manipulator's
description expanded to URDF."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import EXIT_BAD_INPUT, EXIT_OK


def add_parsers(sub: Any) -> None:
    robot = sub.add_parser("robot", help="the mobile manipulator's description")
    robot_sub = robot.add_subparsers(dest="robot_command", required=True)
    urdf = robot_sub.add_parser("urdf", help="print the expanded URDF (xacro)")
    urdf.add_argument("--controllers", default="", help="ros2_control parameters file for gz_ros2_control "
                                                        "(adds the ros2_control block)")
    urdf.add_argument("--no-gazebo", action="store_true", help="leave out the gz sensor and drive plugins")
    urdf.add_argument("--torso-fixed", action="store_true", help="the torso lift a fixed joint at its lowest (a "
                                                                 "kinematic copy of the arm, as the PyBullet body's IK uses)")
    urdf.add_argument("--out", type=Path, help="write to this file instead of printing")
    urdf.set_defaults(func=cmd_robot_urdf)


def cmd_robot_urdf(args: argparse.Namespace) -> int:
    from conceptagent_ros.world.robot_description import robot_urdf

    text = robot_urdf(args.controllers, gazebo=not args.no_gazebo, torso_fixed=args.torso_fixed)
    if args.out:
        try:
            args.out.write_text(text)
        except OSError as e:
            print(f"conceptagent: error: cannot write {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return EXIT_OK
