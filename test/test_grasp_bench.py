"""The physical grasping benchmark, small: a few objects picked on the PyBullet Panda from what its
cameras see, judged on PyBullet's ground truth. `conceptagent bench --suite grasp` is the real run
(its figures are in docs/manipulation.md)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld  # noqa: E402
from conceptagent_ros.errors import ConceptAgentError  # noqa: E402
from conceptagent_ros.evaluation.grasp_bench import judge_held, parse_objects, run_episode, run_grasp_bench  # noqa: E402


def test_object_specs() -> None:
    assert parse_objects("cube,random:3-5") == ["cube", "random:3", "random:4", "random:5"]
    assert len(parse_objects("named")) == 7
    for bad in ("random:5-2", "random:999-1000", "unicorn", "random:x", ""):
        with pytest.raises(ConceptAgentError):
            parse_objects(bad)


def test_the_judge_says_an_object_on_the_table_is_not_held() -> None:
    world = GraspWorld(["cube"], seed=0)
    try:
        held, why = judge_held(world, "cube")
        assert not held and "above the table" in why
    finally:
        world.close()


def test_single_objects_are_picked_and_held_through_the_motion(tmp_path) -> None:
    episodes = run_grasp_bench(["cube", "duck", "random:3"], seeds=1, picture=tmp_path / "candidates.png")
    assert [e.object for e in episodes] == ["cube", "duck", "random:3"]
    assert sum(e.success for e in episodes) >= 2, episodes
    for e in episodes:
        assert e.success == (e.code == ""), e
        assert e.points > 10 and e.planning_ms > 0
    assert (tmp_path / "candidates.png").stat().st_size > 10_000


def test_in_clutter_each_object_is_picked_in_turn() -> None:
    episodes = run_episode(["cube", "sphere", "random:7"], seed=1)
    assert sorted(e.object for e in episodes) == ["cube", "random:7", "sphere"]
    assert all(e.clutter == 3 for e in episodes)
    assert sum(e.success for e in episodes) >= 2, episodes
    assert np.isfinite([e.planning_ms for e in episodes]).all()
