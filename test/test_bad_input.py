"""Bad input exits 2 with one line naming the file or flag, everywhere (and nothing hostile is
echoed to the terminal)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conceptagent_ros.cli import main
from conceptagent_ros.paths import config_dir

GOOD_SCENE = yaml.safe_load((config_dir() / "scenes" / "studio_kitchen.yaml").read_text())


def scene_with(tmp_path: Path, change) -> str:  # noqa: ANN001
    data = yaml.safe_load(yaml.safe_dump(GOOD_SCENE))
    change(data)
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def obj(data: dict, oid: str) -> dict:
    return next(o for o in data["objects"] if o["id"] == oid)


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


CASES = {
    "scene not UTF-8": lambda t: (["run", "open the fridge", "--scene", write(t, "s.yaml", b"name: k\xff\xfe\n")],
                                  ["s.yaml", "not UTF-8"]),
    "scene bounds with strings": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: d["rooms"][0].update(
        bounds=["a", 0, 5, 5]))], ["scene.yaml", "rooms[0] (kitchen_1).bounds"]),
    "scene view_range abc": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: d.setdefault("robot", {}).update(
        view_range="abc"))], ["scene.yaml", "robot.view_range"]),
    "scene robot: 5": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: d.update(robot=5))],
                                 ["scene.yaml", "robot"]),
    "scene state: hot": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: obj(d, "apple_1").update(
        state="hot"))], ["scene.yaml", "objects[", "(apple_1).state"]),
    "scene negative reach": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: d.setdefault("robot", {}).update(
        reach=-1))], ["scene.yaml", "robot.reach", "greater than 0"]),
    "scene malformed YAML": lambda t: (["run", "x", "--scene", write(t, "bad.yaml", "rooms: [\n  {id: k\nobjects: ]\n")],
                                       ["bad.yaml", "not valid YAML at line"]),
    "scene unknown failure skill": lambda t: (["run", "x", "--scene", scene_with(t, lambda d: d.update(
        failures={"fly": 0.1}))], ["scene.yaml", "failures.fly", "no such skill"]),
    "--trace to a directory": lambda t: (["run", "open the fridge", "--trace", str(t)], ["--trace", "is a directory"]),
    "--trace unwritable": lambda t: (["run", "open the fridge", "--trace", write(t, "f.txt", "x") + "/trace.jsonl"],
                                     ["--trace", "is not a directory"]),
    "bench --out a file": lambda t: (["bench", "--suite", "easy", "--out", write(t, "out.txt", "x")],
                                     ["out.txt", "is a file"]),
    "preconditions malformed YAML": lambda t: (["preconditions", "evaluate", write(t, "p.yaml", "preconditions: {pick: [")],
                                               ["p.yaml", "not valid YAML"]),
    "preconditions python tag": lambda t: (["preconditions", "evaluate", write(
        t, "p.yaml", "preconditions: !!python/object/apply:os.system ['echo owned']\n")], ["p.yaml", "not valid YAML"]),
    "preconditions not UTF-8": lambda t: (["preconditions", "evaluate", write(t, "p.yaml", b"preconditions: {pick: \xff}")],
                                          ["p.yaml", "not UTF-8"]),
    "preconditions non-string formula": lambda t: (["preconditions", "evaluate", write(
        t, "p.yaml", "preconditions: {pick: 5}\n")], ["p.yaml", "preconditions.pick"]),
    "preconditions bad formula": lambda t: (["preconditions", "evaluate", write(
        t, "p.yaml", "preconditions:\n  pick: (and (near ?obj) (flies ?obj))\n")], ["p.yaml", "preconditions.pick", "flies"]),
    "--failure-rate unknown skill": lambda t: (["run", "open the fridge", "--failure-rate", "fly=0.5"],
                                               ["--failure-rate", "no skill 'fly'"]),
    "goal with swapped types": lambda t: (["run", "x", "--goal", "(in fridge_1 apple_1)"],
                                          ["goal", "can never hold", "apple_1 (apple) to be receptacle"]),
    "goal: a desk on a counter": lambda t: (["run", "x", "--scene", "apartment", "--goal", "(in desk_1 countertop_1)"],
                                           ["can never hold", "desk_1"]),
    "goal: a fixed property changed": lambda t: (["run", "x", "--scene", "apartment", "--goal", "(pickupable desk_1)"],
                                                 ["can never hold", "fixed property", "desk_1 is not pickupable"]),
    "goal: one thing in two places": lambda t: (["run", "x", "--goal", "(and (in apple_1 fridge_1) (in apple_1 sink_1))"],
                                                ["can never hold", "apple_1 cannot be `in` two things at once"]),
    "goal: two things held": lambda t: (["run", "x", "--goal", "(and (holding apple_1) (holding cup_1))"],
                                        ["can never hold", "only one holding atom"]),
    "goal: empty hand holding": lambda t: (["run", "x", "--goal", "(and (hand_empty) (holding apple_1))"],
                                           ["can never hold", "never hold together"]),
    "goal: an atom and its negation": lambda t: (["run", "x", "--goal", "(and (open fridge_1) (not (open fridge_1)))"],
                                                 ["can never hold", "(not (open fridge_1))"]),
    "goal: some thing of a kind not here": lambda t: (["run", "x", "--scene", "studio_kitchen", "--goal",
                                                       "(exists (?t - table) (in spoon_1 ?t))"],
                                                      ["can never hold", "there is no table here"]),
    "instruction: a kind not here": lambda t: (["run", "could you put the spoon on the table", "--scene", "family_house"],
                                               ["there is no table here", "the coffee table or the dining table"]),
    "--max-steps -1": lambda t: (["run", "open the fridge", "--max-steps", "-1"], ["--max-steps", "at least 1"]),
    "mcts:c=nan": lambda t: (["run", "open the fridge", "--planner", "mcts:c=nan"], ["c='nan'", "finite"]),
    "bench --seeds 0": lambda t: (["bench", "--suite", "easy", "--seeds", "0"], ["--seeds", "at least 1"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_with_one_line(case, tmp_path, capsys):
    argv, expected = CASES[case](tmp_path)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    for part in expected:
        assert part in err, (part, err)
    assert "Traceback" not in err


def test_control_characters_are_not_echoed(capsys):
    code = main(["run", "put the apple\x07 in the\tfridge\x00"])
    out = capsys.readouterr().out
    assert code == 0 and "\x07" not in out and "\x00" not in out
    code = main(["run", "\x1b[2J\x1b[31mput the apple in the fridge"])  # an escape sequence: refused, not echoed
    captured = capsys.readouterr()
    assert code == 2 and "\x1b" not in captured.out + captured.err


def test_scenes_into_a_closed_pipe_ends_quietly():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m conceptagent_ros.cli scenes family_house | head -1", shell=True,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() and "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
