"""Instructions phrased as a new user would, without --goal, on the offline backend: the grammar
turns them into the right goal (never a wrong one) and the robot reaches it in the world."""
from __future__ import annotations

import pytest

from conceptagent_ros.sim.episode import EpisodeSpec, run_episode

CASES = [
    ("toss the newspaper into the garbage can", "apartment", "newspaper", "garbage_can"),
    ("put the wine in the fridge", "family_house", "wine_bottle", "fridge"),
    ("bring the cup from the dining table to the sink", "studio_kitchen", "cup", "sink"),
    ("stash the apple in the fridge", "studio_kitchen", "apple", "fridge"),
    ("take the mug out of the cabinet and put it in the sink", "studio_kitchen", "mug", "sink"),
]


@pytest.mark.parametrize("instruction, scene, thing, place", CASES, ids=[c[0] for c in CASES])
def test_free_text_instruction_reaches_the_right_goal(instruction, scene, thing, place):
    result = run_episode(EpisodeSpec(instruction, scene=scene, max_steps=60))
    assert f"- {thing}" in result.goal and f"- {place}" in result.goal and "(in " in result.goal
    assert result.success, (result.goal, result.stats.stop_reason)


def test_the_source_is_not_taken_for_the_destination():
    result = run_episode(EpisodeSpec("bring the cup from the dining table to the sink", max_steps=60))
    assert "dining_table" not in result.goal
