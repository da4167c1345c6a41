"""Hostile map programs: each is refused by the AST check or stopped by the worker's limits."""
from __future__ import annotations

import socket

import numpy as np
import pytest

from conceptagent_ros.voxposer.api import (
    WORKER_RUNNER,
    ComposeRequest,
    EvaluateRequest,
    ObjectCloud,
    SceneSnapshot,
    VoxelGrid,
    unpack_map,
)
from conceptagent_ros.voxposer.sandbox import Sandbox, SandboxError, SandboxLimits, check_program

REFUSED = {
    "file read": "ret_val = open('/etc/passwd').read()",
    "import": "import os\nret_val = os.listdir('/')",
    "from import": "from subprocess import run\nrun(['true'])",
    "dunder import": "ret_val = __import__('os')",
    "builtins walk": "ret_val = detect.__globals__['__builtins__']",
    "subclasses": "ret_val = ().__class__.__bases__[0].__subclasses__()",
    "eval": "ret_val = eval('1+1')",
    "exec": "exec('x = 1')",
    "compile": "compile('1', 'f', 'eval')",
    "getattr": "ret_val = getattr(np, 'load')",
    "globals": "ret_val = globals()",
    "vars": "ret_val = vars(np)",
    "type": "ret_val = type(np)",
    "numpy file loader": "ret_val = np.load('/etc/passwd')",
    "numpy ctypes": "ret_val = np.ctypeslib",
    "numpy lib": "ret_val = np.lib.format",
    "ndarray tofile": "a = np.zeros(3)\na.tofile('/tmp/x')",
    "ndarray ctypes": "a = np.zeros(3)\nret_val = a.ctypes",
    "ndarray dump": "np.zeros(3).dump('/tmp/x')",
    "format-string attribute walk": "ret_val = '{0.__globals__}'.format(detect)",
    "format_map": "ret_val = '{x.__class__}'.format_map({'x': 1})",
    "generator frame": "g = (x for x in [1])\nret_val = g.gi_frame.f_globals",
    "frame via f_back": "ret_val = detect.f_back",
    "patch the API": "np.argmin = max",
    "private names": "_x = 1",
    "global": "global x\nx = 1",
    "class": "class A:\n    pass",
    "try to swallow limits": "try:\n    x = 1\nexcept Exception:\n    pass",
    "with": "with open('/tmp/x') as f:\n    pass",
    "socket by name": "ret_val = socket.socket()",
    "decorator": "@detect\ndef f():\n    pass",
    "match class pattern reads a dunder": "match 1:\n    case int(__class__=c):\n        ret_val = c",
    "match class pattern hands out str.format": "match '':\n    case str(format=f):\n        ret_val = f('{0.__class__}', 1)",
    "match class pattern, positional": "match detect('blue block'):\n    case dict(x):\n        ret_val = x",
    "syntax error": "ret_val = (",
    "not text": None,
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_hostile_snippets_are_refused_before_running(name):
    with pytest.raises(SandboxError) as err:
        check_program(REFUSED[name])
    assert err.value.kind == "rejected" and str(err.value)


def snapshot() -> SceneSnapshot:
    block = np.array([[0.5, 0.0, 0.02], [0.52, 0.02, 0.04]])
    return SceneSnapshot(VoxelGrid((0.0, -0.5, 0.0), (1.0, 0.5, 0.6)), (ObjectCloud("blue block", block),),
                         (0.3, 0.0, 0.4), (1.0, 0.0, 0.0, 0.0), 0.0, (0.0, -0.5, 0.0), (1.0, 0.5, 0.0))


def compose(sandbox: Sandbox, code: str):
    return sandbox.run(code, "composer", ComposeRequest(snapshot(), {}, "composer"))


def evaluate(sandbox: Sandbox, affordance_code: str):
    programs = {("parse_query_obj", "gripper"): "ret_val = detect('gripper')",
                ("get_affordance_map", "q"): affordance_code}
    values = sandbox.run("pass", "get_affordance_map", EvaluateRequest(snapshot(), programs, "gripper", {"affordance": "q"}))
    return {key: unpack_map(value) for key, value in values.items()}


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(WORKER_RUNNER, SandboxLimits(timeout_s=1.5, memory_bytes=512 << 20)) as box:
        yield box


def test_infinite_loop_is_stopped_and_the_sandbox_recovers(sandbox):
    with pytest.raises(SandboxError) as err:
        evaluate(sandbox, "while True:\n    pass")
    assert err.value.kind == "timeout" and "1.5 s" in str(err.value)
    maps = evaluate(sandbox, "m = get_empty_affordance_map()\nm[1, 2, 3] = 1\nret_val = m")
    assert maps["affordance"][1, 2, 3] == 1


def test_slow_numpy_work_is_stopped(sandbox):
    with pytest.raises(SandboxError) as err:
        evaluate(sandbox, "m = get_empty_affordance_map()\n"
                          "for i in range(100000):\n    m = m + np.ones((100, 100, 100))\nret_val = m")
    assert err.value.kind == "timeout"


@pytest.mark.parametrize("bomb", [
    "ret_val = np.ones((4000, 4000, 100))",
    "ret_val = 'x' * (10 ** 10)",
    "a = [0] * (10 ** 10)",
    "ret_val = f\"{'':>{10 ** 10}}\"",
])
def test_memory_bombs_are_stopped(sandbox, bomb):
    with pytest.raises(SandboxError) as err:
        evaluate(sandbox, bomb)
    assert err.value.kind == "memory"
    assert evaluate(sandbox, "ret_val = get_empty_affordance_map()")["affordance"].shape == (100, 100, 100)


def test_match_statements_without_class_patterns_still_run(sandbox):
    maps = evaluate(sandbox, "m = get_empty_affordance_map()\nmatch 2:\n    case 1:\n        m[0, 0, 0] = 1\n"
                             "    case 2 | 3:\n        m[1, 1, 1] = 1\nret_val = m")
    assert maps["affordance"][1, 1, 1] == 1 and maps["affordance"][0, 0, 0] == 0


def test_a_print_loop_is_cut_and_says_so(capfd):
    """Output is bounded in lines and bytes per request; the program is stopped by that bound (kind
    output, not the time limit's timeout) and the error says the output was cut."""
    from conceptagent_ros.voxposer.sandbox import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES

    with Sandbox(WORKER_RUNNER, SandboxLimits(timeout_s=1.5, memory_bytes=512 << 20)) as sandbox:  # its stderr is captured
        _cut_print_loops(sandbox, capfd, MAX_OUTPUT_LINES, MAX_OUTPUT_BYTES)


def _cut_print_loops(sandbox, capfd, max_lines, max_bytes):
    for loop in ("while True:\n    print('x')",  # many short lines
                 "while True:\n    print('y' * 400)"):  # few long ones: the byte bound
        with pytest.raises(SandboxError) as err:
            evaluate(sandbox, loop)
        assert err.value.kind == "output" and "cut" in str(err.value)
    printed = capfd.readouterr().err
    assert printed.count("[sandbox: output cut") == 2
    assert len(printed.encode()) < 2 * (max_bytes + 1000) and printed.count("\n") < 2 * (max_lines + 5)
    # a fresh budget for the next request: a few lines are fine
    assert evaluate(sandbox, "print('ok')\nret_val = get_empty_affordance_map()")["affordance"].shape == (100, 100, 100)


def test_a_raising_program_is_explained_with_its_line(sandbox):
    with pytest.raises(SandboxError) as err:
        evaluate(sandbox, "m = get_empty_affordance_map()\nblock = detect('purple elephant')\nret_val = m")
    assert err.value.kind == "raised" and "line 2" in str(err.value) and "blue block" in str(err.value)


def test_the_worker_cannot_reach_the_network_or_files_even_through_the_api(sandbox):
    # the API's own objects offer no way out: attribute allow-list applies inside nested programs too
    with pytest.raises(SandboxError):
        evaluate(sandbox, "o = detect('blue block')\nret_val = o.grid")
    assert socket  # imported here only to name what the snippets above cannot reach


def test_composer_programs_ask_for_missing_programs_then_record_requests(sandbox):
    code = ("movable = parse_query_obj('gripper')\n"
            "affordance_map = get_affordance_map('a point above the blue block')\n"
            "execute(movable, affordance_map=affordance_map)")
    with pytest.raises(SandboxError) as err:
        compose(sandbox, code)
    assert err.value.kind == "need_program" and "parse_query_obj" in str(err.value)
    programs = {("parse_query_obj", "gripper"): "ret_val = detect('gripper')"}
    requests = sandbox.run(code, "composer", ComposeRequest(snapshot(), programs, "composer"))
    assert requests == [("execute", "gripper", {"affordance": "a point above the blue block"})]


def test_map_programs_cannot_act_on_the_robot(sandbox):
    with pytest.raises(SandboxError) as err:
        evaluate(sandbox, "execute(detect('gripper'))\nret_val = get_empty_affordance_map()")
    assert err.value.kind == "raised" and "execute" in str(err.value)
