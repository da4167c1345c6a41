"""`conceptagent world export SCENE|all --out DIR`: scene files as SDF worlds and occupancy maps."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import EXIT_BAD_INPUT, EXIT_OK


def add_parsers(sub: Any) -> None:
    world = sub.add_parser("world", help="scene files as worlds for Gazebo and PyBullet, and their maps")
    world_sub = world.add_subparsers(dest="world_command", required=True)
    export = world_sub.add_parser("export", help="write SCENE.sdf, SCENE_map.pgm and SCENE_map.yaml")
    export.add_argument("scene", help="a built-in household scene, a scene YAML path, or 'all' (every built-in "
                                      "household scene)")
    export.add_argument("--out", type=Path, default=Path("worlds"), help="directory to write to (default: worlds)")
    export.add_argument("--picture", action="store_true", help="also SCENE.png: the world as PyBullet renders it")
    export.set_defaults(func=cmd_world_export)


def cmd_world_export(args: argparse.Namespace) -> int:
    from conceptagent_ros.scene.loader import list_scenes, load_scene
    from conceptagent_ros.world.export import export_world

    names = list_scenes("household") if args.scene == "all" else [args.scene]
    for name in names:
        try:
            done = export_world(load_scene(name), args.out)
        except OSError as e:
            print(f"conceptagent: error: cannot write to {args.out}: {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{done.scene}: {done.sdf} ({done.models} models, {done.doorways} doorways), "
              f"{done.map_pgm} + {done.map_yaml.name} ({done.free_share:.0%} of the map free)")
        if args.picture:
            from conceptagent_ros.world.world_render import render_world

            print(f"  picture: {render_world(done.sdf, args.out / f'{done.scene}.png')}")
    return EXIT_OK
