"""One factory builds every body: what it is, what it refuses, and that its judged state is the
world's own, not the body's belief."""
from __future__ import annotations

from pathlib import Path

import pytest

from conceptagent_ros.bodies.factory import make_body
from conceptagent_ros.bodies.sensing import body_sensing
from conceptagent_ros.bodies.traits import physical_body_traits
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall


def test_the_symbolic_body_acts_in_the_world_it_is_given_and_is_judged_on_it():
    world = World(load_scene("studio_kitchen"))
    body = make_body(world.scene, world=world)
    assert body.kind == "symbolic" and body.physical is None and not body.mobile
    assert body.execute(SkillCall("navigate_to", ("apple_1",))).success
    assert ("near", "apple_1") in world.state().atoms
    assert body.judged_state().atoms == world.state().atoms
    assert body.symbolic_part(["in", "filled"]) == []  # the symbolic world claims no physics to set apart
    assert body.picture(Path("unused.png")) is None
    body.close()


def test_a_camera_on_the_symbolic_world_sees_through_frames_but_is_judged_on_the_world():
    world = World(load_scene("studio_kitchen"))
    body = make_body(world.scene, perception="camera", world=world)
    assert type(body.senses).__name__ == "PerceivingRobot"
    assert body.observe().objects  # what the camera saw
    assert body.judged_state().atoms == world.state().atoms


@pytest.mark.parametrize(("scene", "settings", "words"), [
    ("studio_kitchen", {"body": "wheels"}, "body must be one of"),
    ("studio_kitchen", {"perception": "sonar"}, "perception must be one of"),
    ("studio_kitchen", {"perception": "external"}, "no camera images"),
    ("studio_kitchen", {"body": "pybullet", "failure_rates": {"pick": 0.5}}, "leave out --failure-rate"),
    ("tabletop", {"body": "pybullet", "perception": "camera"}, "leave out --perception"),
    ("studio_kitchen", {"sensing": "realistic"}, "physical body"),
    ("studio_kitchen", {"body": "pybullet", "sensing": "sonar"}, "sensing must be one of"),
    ("tabletop", {"body": "pybullet", "sensing": "realistic"}, "household body's for now"),
])
def test_what_a_body_cannot_honour_is_refused_before_anything_is_built(scene, settings, words):
    with pytest.raises(ValueError, match=words):
        make_body(load_scene(scene), **settings)


@pytest.mark.parametrize(("body", "setting", "asked", "senses"), [
    ("pybullet", "household", None, "realistic"),
    ("pybullet", "household", "realistic", "realistic"),
    ("pybullet", "household", "ideal", "ideal"),
    ("pybullet", "tabletop", None, "ideal"),  # the tabletop's cameras see as rendered
    ("pybullet", "tabletop", "ideal", "ideal"),
    ("symbolic", "household", None, "ideal"),
])
def test_each_body_senses_as_asked_or_as_its_own_default(body, setting, asked, senses):
    assert body_sensing(body, setting, asked) == senses


def test_the_household_body_is_mobile_and_judged_on_pybullet():
    body = make_body(load_scene("studio_kitchen"), "pybullet")
    traits = physical_body_traits(load_scene("studio_kitchen"))  # what a launch reads, without building it
    try:
        assert body.kind == "household" and body.mobile and body.physical is body.senses
        assert traits.mobile and set(traits.skills()) == set(body.physical.SKILLS) and "navigate_to" in traits.skills()
        truth = body.judged_state()
        assert any(a[0] == "in" and a[1] == "apple_1" for a in truth.atoms)  # where PyBullet has it
        assert body.symbolic_part(["in", "open", "filled"]) == ["filled"]  # judged on its flags, reported apart
    finally:
        body.close()


def test_the_tabletop_arm_is_not_mobile_and_serves_the_arm_skills_alone():
    traits = physical_body_traits(load_scene("tabletop"))
    assert not traits.mobile  # navigate_to: the fixed arm reaches what it reaches from its base
    assert set(traits.skills()) == {"navigate_to", "pick", "place", "open", "close"}
