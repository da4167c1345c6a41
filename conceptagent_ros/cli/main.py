"""The `conceptagent` command: one parser, each command's arguments beside its handler
(cli/tasks.py, perception.py, models.py, voxposer.py, preconditions.py, ros.py, world.py, robot.py,
speech.py). Exit codes: 0 success, 1 the task failed, 2 bad input."""
from __future__ import annotations

import argparse
import logging
import os
import sys

from conceptagent_ros.cli import models, perception, preconditions, robot, ros, speech, tasks, voxposer, words, world
from conceptagent_ros.cli.common import EXIT_BAD_INPUT, EXIT_OK, OneLineParser, printable
from conceptagent_ros.errors import ConceptAgentError


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="conceptagent", description="ConceptAgent task planning on the embedded world")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    tasks.add_parsers(sub)
    perception.add_parsers(sub)
    models.add_parsers(sub)
    voxposer.add_parsers(sub)
    preconditions.add_parsers(sub)
    ros.add_parsers(sub)
    world.add_parsers(sub)
    robot.add_parsers(sub)
    speech.add_parsers(sub)
    words.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # what the translator took an unknown word for, or how it read a polite frame: the user should see it
    logging.getLogger("conceptagent_ros.planning.free_text").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return int(args.func(args))
    except ConceptAgentError as e:
        print(f"conceptagent: error: {printable(str(e), 2000)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `conceptagent scenes apartment | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("conceptagent: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
