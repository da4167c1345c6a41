"""VoxPoser end to end on the PyBullet tabletop with the offline composer; success judged from the
simulator's ground truth (voxposer/task_templates.py), and failures that leave the arm stopped."""
from __future__ import annotations

import numpy as np
import pytest

from conceptagent_ros.voxposer.api import WORKER_RUNNER
from conceptagent_ros.voxposer.executor import VoxPoser
from conceptagent_ros.voxposer.lmps import OfflineWriter, ProgramBook, ProgramCache
from conceptagent_ros.voxposer.sandbox import Sandbox, SandboxLimits
from conceptagent_ros.voxposer.session import run_on_tabletop
from conceptagent_ros.voxposer.tabletop import BlockSpec, Tabletop, TabletopScene
from conceptagent_ros.voxposer.task_templates import make_task

pytest.importorskip("pybullet")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(WORKER_RUNNER, SandboxLimits(timeout_s=2.0)) as box:
        yield box


@pytest.fixture(autouse=True)
def no_program_cache(monkeypatch):
    monkeypatch.setenv("CONCEPTAGENT_VOXPOSER_CACHE", "off")


@pytest.mark.parametrize("template,seed,seen", [
    (0, 0, True), (9, 0, True), (8, 2, False), (0, 3, False),
    (3, 0, True), (3, 1, False),  # close a drawer by pushing
    (12, 0, True), (11, 1, True), (4, 0, False), (7, 1, False),  # push a block: to a place, around an obstacle, ...
])
def test_templates_run_end_to_end_with_the_offline_composer(sandbox, template, seed, seen):
    task = make_task(template, seed, seen=seen)
    episode = run_on_tabletop(task.instruction, task.scene, OfflineWriter(), judge=task.judge, sandbox=sandbox)
    assert episode.report.success, episode.report.message
    assert episode.judged, episode.verdict
    assert episode.report.replans and episode.report.replan_hz > 0


class ScriptedWriter:
    """Stands in for an LLM whose affordance program is bad."""

    name = "scripted"

    def __init__(self, affordance: str) -> None:
        self.affordance = affordance

    def write(self, lmp, query, objects, feedback=""):
        if lmp == "get_affordance_map":
            return self.affordance
        return OfflineWriter().write(lmp, query, objects)


@pytest.mark.parametrize("program,kind", [
    ("while True:\n    pass", "timeout"),
    ("ret_val = 42", "bad_result"),
    ("m = get_empty_affordance_map()\nm[0, 0, 0] = np.nan\nret_val = m", "bad_result"),
    ("ret_val = detect('unicorn')", "raised"),
    ("import os\nret_val = os.getcwd()", "rejected"),
])
def test_a_bad_map_program_leaves_the_arm_stopped_and_explains(sandbox, program, kind):
    scene = TabletopScene((BlockSpec("blue block", "blue", (0.5, 0.1)),))
    with Tabletop(scene) as env:
        before = env.ee_position()
        agent = VoxPoser(env, ProgramBook(ScriptedWriter(program), ProgramCache(None)), sandbox)
        report = agent.run("move to the top of the blue block")
        assert not report.success and report.error_kind == kind and report.message
        assert not report.waypoints
        env.step(120)
        assert np.linalg.norm(env.ee_position() - before) < 0.01  # nothing was sent to the arm


def test_an_instruction_the_offline_composer_does_not_know_is_refused_clearly(sandbox):
    with Tabletop(TabletopScene()) as env:
        report = VoxPoser(env, ProgramBook(OfflineWriter(), ProgramCache(None)), sandbox).run("juggle three oranges")
    assert not report.success and "does not understand" in report.message


@pytest.mark.parametrize("template", [3, 4, 7, 11, 12])
def test_pushing_and_drawer_judges_fail_when_nothing_is_done(template):
    """The judges read the simulator: an untouched scene is not a success (they can fail)."""
    task = make_task(template, 0)
    with Tabletop(task.scene) as env:
        env.step(120)
        ok, why = task.judge(env)
    assert not ok, why


def test_push_model_chooses_pushes_from_the_far_side_that_move_the_block_toward_the_goal():
    from conceptagent_ros.voxposer.pushing import PushModel
    model = PushModel()
    rng = np.random.default_rng(0)
    centre, goal = np.array([0.5, 0.0]), np.array([0.45, 0.05])
    push = model.choose(centre, 0.025, goal, lambda xy: np.zeros(len(xy)), rng)
    way = (goal - centre) / np.linalg.norm(goal - centre)
    assert push.direction @ way > 0.9  # pushing toward the goal
    assert (push.contact - centre) @ way < -0.02  # from the block's far side
    assert np.linalg.norm(push.predicted - goal) < 0.02
    # an avoidance cost on the straight way makes it choose a prediction elsewhere
    blocked = model.choose(centre, 0.025, goal, lambda xy: 10.0 * (np.linalg.norm(xy - goal, axis=1) < 0.03), rng)
    assert np.linalg.norm(blocked.predicted - goal) >= 0.03
    # a block at the edge of the hand's reach, to be pushed back toward the robot: the push that
    # would approach from the far side is out of reach, so a reachable one is chosen instead
    base, reach = np.zeros(2), 0.78
    edge, back = np.array([0.77, 0.0]), np.array([0.70, 0.0])

    def reachable(xy):
        return np.linalg.norm(xy - base, axis=-1) <= reach
    free = model.choose(edge, 0.02, back, lambda xy: np.zeros(len(xy)), np.random.default_rng(1))
    assert not reachable(free.pre_contact(0.03))  # unconstrained, it would reach past the arm
    bounded = model.choose(edge, 0.02, back, lambda xy: np.zeros(len(xy)), np.random.default_rng(1),
                           reachable=reachable)
    assert reachable(bounded.pre_contact(0.03)) and reachable(bounded.end())
