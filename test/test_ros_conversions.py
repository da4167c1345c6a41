"""Every message conversion round-trips: core object -> message -> core object gives it back."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ros_helpers import require_ros

require_ros()

from builtin_interfaces.msg import Time  # noqa: E402

from conceptagent_ros.action import ExecuteSkill  # noqa: E402
from conceptagent_ros.planning.agent import StepReport  # noqa: E402
from conceptagent_ros.planning.proposal import Proposal, StepRecord  # noqa: E402
from conceptagent_ros.ros.conversions import markers, plan, scene, skills  # noqa: E402
from conceptagent_ros.scene.loader import load_scene  # noqa: E402
from conceptagent_ros.scene.model import AFFORDANCES, STATE_KEYS, RobotState, Room, SceneObject  # noqa: E402
from conceptagent_ros.scene.observation import Observation  # noqa: E402
from conceptagent_ros.sim.world import World  # noqa: E402
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome  # noqa: E402

ids = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
coords = st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 3))
objects = st.builds(
    SceneObject, id=ids, category=ids, room=ids, position=st.tuples(coords, coords, coords),
    affordances=st.frozensets(st.sampled_from(AFFORDANCES)),
    state=st.dictionaries(st.sampled_from(STATE_KEYS), st.just(True)),
    parent=st.none() | ids, hidden=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(objects)
def test_scene_object_round_trips(obj):
    assert scene.scene_object_from_msg(scene.scene_object_to_msg(obj)) == obj


def test_a_whole_world_observation_round_trips():
    world = World(load_scene("apartment"))
    observation = world.observe()
    msg = scene.graph_to_msg(observation, world.scene.rooms, world.scene.categories(), Time(sec=5, nanosec=7))
    back = scene.graph_from_msg(msg)
    assert back.observation.robot == observation.robot
    # messages carry the flags that are true; a false flag and an absent one mean the same
    true_flags = [replace(o, state={k: v for k, v in o.state.items() if v}) for o in observation.objects]
    assert sorted(back.observation.objects, key=lambda o: o.id) == sorted(true_flags, key=lambda o: o.id)
    assert back.observation.receptacles_seen_inside == observation.receptacles_seen_inside
    assert back.rooms == world.scene.rooms
    assert back.vocabulary == frozenset(world.scene.categories())
    assert back.stamp_ns == 5_000_000_007


def test_relations_name_containment():
    fridge = SceneObject("fridge_1", "fridge", "k", (0, 0, 0), frozenset({"openable", "receptacle"}))
    table = SceneObject("table_1", "table", "k", (1, 0, 0), frozenset({"receptacle"}))
    apple = SceneObject("apple_1", "apple", "k", (0, 0, 0), frozenset({"pickupable"}), parent="fridge_1")
    cup = SceneObject("cup_1", "cup", "k", (1, 0, 0), frozenset({"pickupable"}), parent="table_1")
    rel = {(r.subject, r.predicate, r.object) for r in scene.relations_of([fridge, table, apple, cup])}
    assert rel == {("apple_1", "in", "fridge_1"), ("cup_1", "on", "table_1")}


@given(st.builds(RobotState, position=st.tuples(coords, coords, st.just(0.0)), room=ids, holding=st.none() | ids,
                 reach=st.floats(0.1, 3).map(lambda v: round(v, 2))))
def test_robot_state_round_trips(robot):
    back = scene.robot_from_msg(scene.robot_to_msg(robot))
    assert back.position == robot.position and back.room == robot.room and back.holding == robot.holding
    assert back.reach == pytest.approx(robot.reach, rel=1e-6)


def test_room_round_trips():
    room = Room("kitchen_1", "kitchen", (0.0, -1.5, 6.0, 5.25))
    assert scene.room_from_msg(scene.room_to_msg(room)) == room


@given(st.sampled_from(list(skills.FAILURE_CODES)), st.text(max_size=50), st.lists(ids, max_size=3))
def test_skill_outcomes_round_trip_through_results(failure, message, args):
    call = SkillCall("pick", tuple(args))
    assert skills.call_from_msg(skills.call_to_msg(call)) == call
    outcome = SkillOutcome(call, failure is None, message or "x", failure)
    back = skills.outcome_from_result(call, skills.outcome_to_result(outcome))
    assert back == outcome


def test_error_codes_are_the_action_constants():
    assert skills.FAILURE_CODES["precondition"] == ExecuteSkill.Result.PRECONDITION_FAILED
    assert skills.FAILURE_CODES["unavailable"] == ExecuteSkill.Result.SERVER_UNAVAILABLE
    assert len(set(skills.FAILURE_CODES.values())) == len(skills.FAILURE_CODES)


def test_plan_step_carries_the_report():
    call = SkillCall("place", ("apple_1", "fridge_1"))
    report = StepReport(3, Proposal(call, prompt_tokens=120, completion_tokens=9), None, True,
                        SkillOutcome(call, False, "slipped", "physical"),
                        StepRecord(3, call, True, False, "place(apple_1, fridge_1) failed: slipped", "physical"),
                        ["milk_1"])
    msg = plan.step_to_msg(report, "goal-1", Time(sec=1))
    assert (msg.step, msg.task_id, msg.call.skill, list(msg.call.args)) == (3, "goal-1", "place", ["apple_1", "fridge_1"])
    assert (msg.executed, msg.success, msg.failure) == (True, False, "physical")
    assert msg.feedback.endswith("slipped") and list(msg.new_objects) == ["milk_1"]
    assert (msg.prompt_tokens, msg.completion_tokens) == (120, 9)


def test_scene_markers_cover_every_object_and_clear_stale_ones():
    world = World(load_scene("studio_kitchen"))
    observation: Observation = world.observe()
    array = markers.scene_markers(observation.objects, world.scene.rooms, observation.robot, Time())
    assert array.markers[0].action == array.markers[0].DELETEALL
    boxes = [m for m in array.markers if m.ns == "objects"]
    labels = {m.text.split(" ")[0] for m in array.markers if m.ns == "labels"}
    assert len(boxes) == len(observation.objects) and labels == {o.id for o in observation.objects}


def test_perceived_graph_states_the_ids_perception_fused_away():
    from test_object_fusion import box_surface, det

    from conceptagent_ros.perception.fusion import ObjectMap
    from conceptagent_ros.ros.conversions.perception import map_to_graph_msg
    from conceptagent_ros.ros.conversions.scene import aliases_of, resolve_alias

    table = box_surface((0, 0, 0.4), (1.2, 0.6, 0.8))
    m = ObjectMap()
    m.integrate([det("table", table[table[:, 0] < -0.35])])
    m.integrate([det("table", table[table[:, 0] > 0.35])])
    m.integrate([det("table", table)])
    graph = map_to_graph_msg(m, Time(), "map")
    assert [o.id for o in graph.objects] == ["table_1"]
    assert aliases_of(graph) == {"table_2": "table_1"}
    assert resolve_alias(graph, "table_2") == "table_1" and resolve_alias(None, "table_2") == "table_2"
    # a graph from another source that still lists an alias of a live id: the live object wins
    from conceptagent_ros.msg import ObjectAlias, SceneObject
    graph.objects.append(SceneObject(id="table_2", label="table"))
    graph.aliases = [ObjectAlias(id="table_2", same_as="table_1")]
    assert resolve_alias(graph, "table_2") == "table_2"


def test_points_go_out_as_a_cloud_and_come_back_from_any_layout():
    import numpy as np
    from sensor_msgs.msg import PointCloud2, PointField

    from conceptagent_ros.ros.conversions.clouds import cloud_xyz, xyz_cloud

    points = np.array([[0.5, -0.1, 0.02], [0.51, -0.09, 0.03], [0.52, -0.08, 0.04]])
    msg = xyz_cloud(points, "map", Time(sec=3))
    assert msg.header.frame_id == "map" and msg.width == 3 and msg.point_step == 12
    assert np.allclose(cloud_xyz(msg), points, atol=1e-6)
    # another producer's layout (depth_image_proc's: x y z, padding, rgb), a point with no depth
    layout = np.dtype({"names": ["x", "y", "z", "rgb"], "formats": ["<f4"] * 4, "offsets": [0, 4, 8, 16],
                       "itemsize": 32})
    raw = np.zeros(3, dtype=layout)
    raw["x"], raw["y"], raw["z"] = [1.0, np.nan, 3.0], [0.0, 0.0, 0.0], [2.0, 2.0, 2.0]
    other = PointCloud2(height=1, width=3, point_step=32, row_step=96, is_bigendian=False, data=raw.tobytes(),
                        fields=[PointField(name=n, offset=o, datatype=PointField.FLOAT32, count=1)
                                for n, o in (("x", 0), ("y", 4), ("z", 8), ("rgb", 16))])
    assert np.allclose(cloud_xyz(other), [[1.0, 0.0, 2.0], [3.0, 0.0, 2.0]])
    with pytest.raises(ValueError, match="no float32 y, z field"):
        cloud_xyz(PointCloud2(fields=[PointField(name="x", offset=0, datatype=PointField.FLOAT32, count=1)]))
