"""The household with a body: conceptagent_mm in the exported world in PyBullet, its skills and the
judge of its goals (bodies/household/body.py, bodies/household/judge.py)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")

from conceptagent_ros.bodies.household.body import HouseholdBody  # noqa: E402
from conceptagent_ros.bodies.household.item_clouds import from_frame, mirror_completed, to_frame  # noqa: E402
from conceptagent_ros.bodies.household.judge import physical_household_state  # noqa: E402
from conceptagent_ros.scene.loader import load_scene  # noqa: E402
from conceptagent_ros.skills.contract import SkillCall  # noqa: E402


def _box_faces(lo: np.ndarray, hi: np.ndarray, faces: list[tuple[int, int]], n: int = 12) -> np.ndarray:
    """Points on the given faces (axis, 0 = low side / 1 = high side) of an axis-aligned box."""
    grid = np.linspace(0.0, 1.0, n)
    points = []
    for axis, side in faces:
        others = [a for a in range(3) if a != axis]
        for u in grid:
            for v in grid:
                p = np.empty(3)
                p[axis] = hi[axis] if side else lo[axis]
                p[others[0]] = lo[others[0]] + u * (hi[others[0]] - lo[others[0]])
                p[others[1]] = lo[others[1]] + v * (hi[others[1]] - lo[others[1]])
                points.append(p)
    return np.array(points)


def test_two_faces_seen_from_a_corner_give_the_two_hidden_ones() -> None:
    lo, hi = np.array([1.0, 2.0, 0.9]), np.array([1.12, 2.12, 1.02])
    seen = _box_faces(lo, hi, [(0, 0), (1, 0)])  # the -x and -y faces, as from a camera at the corner
    completed = mirror_completed(seen, eye=np.array([0.5, 1.5, 1.3]))
    assert completed.min(axis=0) == pytest.approx(lo, abs=1e-9)
    assert completed.max(axis=0) == pytest.approx(hi, abs=1e-9)
    # the far faces are there now: points on x = hi and on y = hi
    assert np.isclose(completed[:, 0], hi[0]).sum() >= 100 and np.isclose(completed[:, 1], hi[1]).sum() >= 100


def test_one_face_seen_head_on_is_given_a_back_as_deep_as_it_is_wide() -> None:
    lo, hi = np.array([1.0, 2.0, 0.9]), np.array([1.10, 2.10, 1.0])
    seen = _box_faces(lo, hi, [(0, 0)])  # the -x face only, from straight in front
    completed = mirror_completed(seen, eye=np.array([0.3, 2.05, 0.95]))
    assert float(np.ptp(completed[:, 0])) == pytest.approx(0.10, abs=1e-6)
    assert float(completed[:, 0].max()) == pytest.approx(hi[0], abs=1e-6)


def test_one_face_seen_obliquely_from_above_is_given_a_back_as_deep_as_it_is_wide() -> None:
    """A mug's front seen down into a cabinet, from a camera off to one side and above: the face
    spreads along the line of sight (as wide as the face across it, at that angle), yet it is one
    face, and it gets a back 9 cm behind it."""
    lo, hi = np.array([1.63, 4.47, 0.42]), np.array([1.72, 4.56, 0.53])
    seen = _box_faces(lo, hi, [(1, 0)])  # the -y face only
    completed = mirror_completed(seen, eye=np.array([1.80, 3.85, 1.30]))
    assert float(np.ptp(completed[:, 1])) == pytest.approx(0.09, abs=0.005)
    assert float(completed[:, 1].max()) == pytest.approx(hi[1], abs=0.005)


def test_a_knifes_top_seen_from_above_is_not_taken_for_a_face_with_a_back() -> None:
    """A knife lying on the counter, its top (25 x 2 cm) seen from above and in front: thin across
    its length like a face seen alone, but flat: no back is added 25 cm behind it."""
    lo, hi = np.array([2.13, 4.58, 0.905]), np.array([2.38, 4.60, 0.925])
    seen = _box_faces(lo, hi, [(2, 1)])  # the top face only
    completed = mirror_completed(seen, eye=np.array([2.25, 3.9, 1.3]))
    assert float(np.ptp(completed[:, 1])) < 0.03


def test_points_in_a_frame_and_back() -> None:
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    points = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.2]])
    local = to_frame(points, np.array([1.0, 1.0, 1.0]), rotation)
    assert local[0] == pytest.approx([1.0, 0.0, 2.0])
    assert from_frame(local, np.array([1.0, 1.0, 1.0]), rotation) == pytest.approx(points)


@pytest.fixture(scope="module")
def kitchen() -> HouseholdBody:
    # the camera's geometry as rendered: the tests that want noise put it in themselves
    body = HouseholdBody(load_scene("studio_kitchen"), sensing="ideal")
    yield body
    body.close()


def test_the_robot_sees_the_kitchen_from_where_it_starts(kitchen: HouseholdBody) -> None:
    seen = {o.id: o for o in kitchen.observe().objects}
    # what stands on the counter is seen on it; what is in the closed fridge is not seen at all
    assert seen["apple_1"].parent == "countertop_1"
    assert "fridge_1" in seen and not {"tomato_1", "milk_1", "egg_1"} & set(seen)


def test_each_image_goes_out_as_a_frame_whose_depth_gives_back_the_points_the_body_sees(kitchen: HouseholdBody) -> None:
    """What a perception node gets of the mast camera (frame_sink): depth along the optical axis, the
    lens's pose and per pixel the thing it shows. Back-projected by perception's own pinhole code, a
    thing's pixels land where PyBullet's inverse projection put the body's own points of it."""
    from conceptagent_ros.perception.geometry import GeometryConfig, backproject

    frames: list = []
    kitchen.frame_sink = frames.append
    try:
        seen = kitchen.sight.clouds()
    finally:
        kitchen.frame_sink = None
    [frame] = frames
    named = {frame.instance_names[i] for i in np.unique(frame.instance_ids[frame.instance_ids >= 0])}
    # everything the body saw is named to perception, among other things the frame shows
    assert seen and named >= set(seen) and len(named) >= 2
    # the piece of furniture seen most of (an item's points are completed by symmetry, not seen)
    largest = max((n for n in seen if kitchen.kinds[n] != "item"), key=lambda n: len(seen[n]))
    pixels = frame.instance_ids == frame.instance_names.index(largest)
    points = backproject(frame, pixels, GeometryConfig(stride=1, edge_erosion=0, max_depth=20.0))
    assert len(points) == len(seen[largest]) > 1000
    assert points == pytest.approx(seen[largest], abs=2e-3)


def test_realistic_sensing_puts_the_depth_through_the_noise_model_and_back_onto_the_right_rays(
        kitchen: HouseholdBody) -> None:
    """The camera's points come from the depth as the noise model returns it, back-projected on the
    lens's own rays: with the model's noise set to nothing they are the simulator's own points; with
    it, near things move by millimetres and a few pixels come back empty."""
    from conceptagent_ros.perception.depth_noise import DepthNoise

    camera = kitchen.sight.camera
    saved = camera.noise
    try:
        camera.noise = None
        ideal = camera.capture()
        camera.noise = DepthNoise(axial_scale=0.0, lateral_scale=0.0, grazing_limit_deg=90.0, edge_jump=1e9)
        silent = camera.capture()
        camera.noise = DepthNoise()
        noisy = camera.capture()
    finally:
        camera.noise = saved
    seen = np.isfinite(ideal.points).all(axis=-1)
    assert np.array_equal(seen, np.isfinite(silent.points).all(axis=-1))
    assert np.abs(silent.points[seen] - ideal.points[seen]).max() < 1e-4
    kept = seen & np.isfinite(noisy.points).all(axis=-1)
    assert 0.9 < kept.sum() / seen.sum() < 1.0
    error = np.linalg.norm(noisy.points[kept] - ideal.points[kept], axis=1)
    assert 0.001 < float(np.median(error)) < 0.03


def test_what_is_out_of_reach_or_unknown_is_refused_before_any_motion(kitchen: HouseholdBody) -> None:
    far = kitchen.execute(SkillCall("pick", ("apple_1",)))
    assert not far.success and far.failure == "precondition" and "reach is" in far.message
    unknown = kitchen.execute(SkillCall("pick", ("unicorn_1",)))
    assert not unknown.success and unknown.failure == "invalid"
    door = kitchen.execute(SkillCall("open", ("fridge_1",)))  # across the room
    assert not door.success and door.failure == "precondition" and "reach is" in door.message


def test_the_judge_reads_where_things_are_from_the_simulator(kitchen: HouseholdBody) -> None:
    p, c = kitchen.p, kitchen.client
    apple = kitchen.base.bodies["apple_1"]
    table_lo, table_hi = (np.asarray(v) for v in p.getAABB(kitchen.base.bodies["dining_table_1"], physicsClientId=c))
    saved = p.getBasePositionAndOrientation(apple, physicsClientId=c)

    def judged() -> set[tuple[str, ...]]:
        state = physical_household_state(p, c, kitchen.base.bodies, kitchen.robot, kitchen.scene)
        return {a for a in state.atoms if a[:2] == ("in", "apple_1")}

    assert judged() == {("in", "apple_1", "countertop_1")}
    on_table = [(table_lo[0] + table_hi[0]) / 2, (table_lo[1] + table_hi[1]) / 2, table_hi[2] + 0.061]
    p.resetBasePositionAndOrientation(apple, on_table, [0, 0, 0, 1], physicsClientId=c)
    assert judged() == {("in", "apple_1", "dining_table_1")}
    p.resetBasePositionAndOrientation(apple, [on_table[0], on_table[1], 0.3], [0, 0, 0, 1], physicsClientId=c)
    assert judged() == set()  # in the air under the table's top: on nothing
    p.resetBasePositionAndOrientation(apple, *saved, physicsClientId=c)


def test_a_flag_set_by_a_skill_without_physics_is_never_read_as_physics(kitchen: HouseholdBody) -> None:
    """The judge reads in/open/holding/hand_empty from PyBullet; a symbolic effect (a switched-on
    stove, a filled cup) lives in the body's flags, is listed apart as symbolic, and is in no
    physical reading."""
    toggleable = next(oid for oid, o in kitchen.scene.objects.items() if o.has("toggleable"))
    physical = physical_household_state(kitchen.p, kitchen.client, kitchen.base.bodies, kitchen.robot, kitchen.scene)
    assert ("hand_empty",) in physical.atoms and not any(a[0] == "holding" for a in physical.atoms)
    before = kitchen.flags[toggleable].get("is_on", False)
    kitchen.flags[toggleable]["is_on"] = True
    try:
        assert ("is_on", toggleable) in kitchen.judged_state().atoms
        again = physical_household_state(kitchen.p, kitchen.client, kitchen.base.bodies, kitchen.robot, kitchen.scene)
        assert ("is_on", toggleable) not in again.atoms
    finally:
        kitchen.flags[toggleable]["is_on"] = before
    assert {"is_on", "filled", "sliced"} <= kitchen.symbolic_predicates
    assert not kitchen.symbolic_predicates & {"in", "open", "holding", "hand_empty", "pickupable"}


def test_the_base_drives_to_a_thing_and_then_reaches_it(kitchen: HouseholdBody) -> None:
    """navigate_to plans on the map to where the base should stand for the thing as the camera saw
    it, drives there, and the thing is then within the arm's reach (and the planner is told so)."""
    moved = kitchen.execute(SkillCall("navigate_to", ("apple_1",)))
    assert moved.success, moved.message
    apple = np.asarray(kitchen.p.getBasePositionAndOrientation(kitchen.base.bodies["apple_1"],
                                                                physicsClientId=kitchen.client)[0])
    assert float(np.linalg.norm(apple - kitchen.shoulder())) <= kitchen.skills.spec.arm.reach
    assert ("near", "apple_1") in kitchen.symbolic_state().atoms


def test_the_arm_pulls_a_drawer_open_from_before_its_front_touching_nothing_else(kitchen: HouseholdBody) -> None:
    """open(drawer_1): the base goes to stand before the drawer's front, the arm reaches down past
    the cabinet's top to the handle held level and pulls. Judged on PyBullet: the slide's joint, the
    cabinet where it stood, and no contact between the arm and the cabinet at any physics step."""
    p, c = kitchen.p, kitchen.client
    chest = kitchen.base.bodies["drawer_1"]
    assert kitchen.execute(SkillCall("navigate_to", ("drawer_1",))).success
    where = np.asarray(p.getBasePositionAndOrientation(chest, physicsClientId=c)[0])
    first_arm_link = min(kitchen.arm.arm)
    touched: list[int] = []
    step = kitchen.arm.step

    def watched_step(n: int = 1) -> None:
        for _ in range(n):
            step(1)
            touched.extend(cp[3] for cp in p.getContactPoints(bodyA=kitchen.robot, bodyB=chest, linkIndexB=-1,
                                                                physicsClientId=c) if cp[3] >= first_arm_link)

    kitchen.arm.step = watched_step  # type: ignore[method-assign]
    try:
        opened = kitchen.execute(SkillCall("open", ("drawer_1",)))
    finally:
        kitchen.arm.step = step  # type: ignore[method-assign]
    assert opened.success, opened.message
    assert p.getJointState(chest, 0, physicsClientId=c)[0] > 0.05
    assert float(np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(chest, physicsClientId=c)[0]) - where)) < 0.01
    assert not touched, f"the arm touched the cabinet {len(touched)} times"
    assert ("open", "drawer_1") in kitchen.symbolic_state().atoms  # what the planner is told between looks


def _swung_open(body: HouseholdBody, door: str, moved_at_most: float, observed: bool = False) -> float:
    """navigate_to and open a hinged door on the body (`observed`: the planner's look before each, as
    a task has it); judged on PyBullet: its hinge turned past 75 degrees and the thing it hangs on
    moved at most `moved_at_most` metres. The hinge's angle."""
    p, c, thing = body.p, body.client, body.base.bodies[door]
    where = np.asarray(p.getBasePositionAndOrientation(thing, physicsClientId=c)[0])
    if observed:
        body.observe()
    assert body.execute(SkillCall("navigate_to", (door,))).success
    if observed:
        body.observe()
    opened = body.execute(SkillCall("open", (door,)))
    assert opened.success, opened.message
    hinge = p.getJointState(thing, 0, physicsClientId=c)[0]
    assert abs(hinge) > np.radians(75), np.degrees(hinge)
    moved = float(np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(thing, physicsClientId=c)[0]) - where))
    assert moved < moved_at_most, moved
    return hinge


def test_the_arm_swings_the_fridge_door_open_by_its_handle_and_then_from_inside() -> None:
    """open(fridge_1): the base stands beside the door's swing, the hand pulls the upright handle on
    its arc, lets go, and from before the opening pushes the door on from inside. Judged on PyBullet:
    the hinge's joint, the fridge where it stood, the robot clear of the door where it ends.
    Shutting a tall door is not built: the close says so as unavailable, before any motion, the
    door left as it is."""
    body = HouseholdBody(load_scene("studio_kitchen"))
    try:
        p, c = body.p, body.client
        fridge = body.base.bodies["fridge_1"]
        assert abs(p.getJointState(fridge, 0, physicsClientId=c)[0]) < 0.02
        hinge = _swung_open(body, "fridge_1", moved_at_most=0.01)
        p.performCollisionDetection(physicsClientId=c)
        assert not p.getContactPoints(bodyA=body.robot, bodyB=fridge, physicsClientId=c)
        assert ("open", "fridge_1") in body.symbolic_state().atoms
        closed = body.execute(SkillCall("close", ("fridge_1",)))
        assert not closed.success and closed.failure == "unavailable", closed.message
        assert "tall" in closed.message
        assert p.getJointState(fridge, 0, physicsClientId=c)[0] == pytest.approx(hinge, abs=0.02)
    finally:
        body.close()


def test_with_realistic_senses_the_fridge_opens_from_where_a_task_drives_to_it() -> None:
    """moderate_01's and moderate_05's first two steps with realistic sensing, the planner looking
    before each: the base drove to the push's spot facing the way it came, the shorter turn to the
    door struck the half-open door, and the push and the look that measures the door went off
    facing away (NOT_SEEN). The last turn now goes the other way round."""
    body = HouseholdBody(load_scene("studio_kitchen"), sensing="realistic")
    try:
        _swung_open(body, "fridge_1", moved_at_most=0.01, observed=True)
    finally:
        body.close()


def test_a_cabinet_under_the_counter_is_opened_and_pushed_shut_over_its_top_edge() -> None:
    """open(cabinet_1) in the studio kitchen, the cabinet under the counter (its handle 47 cm up, the
    worktop over its door), with realistic senses: pulled by its handle, pushed on to 90 degrees.
    Then close(cabinet_1): the hand comes down over the door's top edge beside its outer face and
    sweeps it back, in legs from spots clear of the door (the first on the hinge's side, behind
    the open door: the base drives round it, the lidar having seen it). Judged on PyBullet: the
    hinge's joint open and then shut, the cabinet where it stood, the counter untouched."""
    body = HouseholdBody(load_scene("studio_kitchen"), sensing="realistic")
    try:
        p, c = body.p, body.client
        counter = body.base.bodies["countertop_1"]
        cabinet = body.base.bodies["cabinet_1"]
        counter_at = p.getBasePositionAndOrientation(counter, physicsClientId=c)[0]
        cabinet_at = np.asarray(p.getBasePositionAndOrientation(cabinet, physicsClientId=c)[0])
        _swung_open(body, "cabinet_1", moved_at_most=0.02)
        closed = body.execute(SkillCall("close", ("cabinet_1",)))
        assert closed.success, closed.message
        assert abs(p.getJointState(cabinet, 0, physicsClientId=c)[0]) < np.radians(10)
        assert ("open", "cabinet_1") not in body.judged_state().atoms
        assert np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(cabinet, physicsClientId=c)[0]) - cabinet_at) < 0.02
        assert p.getBasePositionAndOrientation(counter, physicsClientId=c)[0] == pytest.approx(counter_at)
    finally:
        body.close()


def test_a_hand_that_closes_on_nothing_gets_no_grip(kitchen: HouseholdBody) -> None:
    """The assisted grip holds only what both fingers squeeze: the hand closed in the air during a
    pick of the apple grips nothing, and the apple stays where it lies."""
    p, c = kitchen.p, kitchen.client
    apple = kitchen.base.bodies["apple_1"]
    before = np.asarray(p.getBasePositionAndOrientation(apple, physicsClientId=c)[0])
    kitchen.grip.picking = "apple_1"
    try:
        kitchen.arm.close_hand()
        assert kitchen.grip.weld_id is None
        kitchen.arm.open_hand()
    finally:
        kitchen.grip.picking = None
    assert np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(apple, physicsClientId=c)[0]) - before) < 0.005


def test_the_carrying_grip_ends_once_the_fingers_lose_what_it_holds(kitchen: HouseholdBody) -> None:
    """A grip set on a thing the fingers do not touch (as if it had been knocked out of the hand) is
    let go of within LOST_AFTER checks, and the grip says what it lost; weld() sets no grip on a
    thing the fingers do not touch at all."""
    from conceptagent_ros.bodies.household.grip import LOST_AFTER
    from conceptagent_ros.bodies.household.mobile_arm import WATCH_EVERY

    grip = kitchen.grip
    assert not grip.touching("apple_1")
    grip._weld_to_hand("apple_1")
    try:
        assert grip.weld_id is not None
        kitchen.arm.step(WATCH_EVERY * LOST_AFTER)
        assert grip.weld_id is None and grip.lost == "apple_1"
    finally:
        grip.let_go_of_weld()
        kitchen.arm.step(60)


def test_a_turn_on_the_spot_stops_short_of_what_it_would_strike() -> None:
    """Stance.turn_to on a stand-in base that strikes a shelf between 40 and 120 degrees: it turns
    in steps, goes the long way round to 150 degrees, and to 90 it gets neither way: back at the
    last free heading it names the shelf; something touched before the turn does not stop it."""
    import math
    from types import SimpleNamespace

    from conceptagent_ros.bodies.household.stance import TURN_STEP, Stance
    from conceptagent_ros.scene.geometry import Pose2D

    class StandInBase:
        def __init__(self) -> None:
            self.pose, self.headings = Pose2D(1.0, 2.0, 0.0), []

        @property
        def believed(self) -> Pose2D:
            return self.pose

        def turn(self, turn: float) -> Pose2D:
            self.pose = Pose2D(self.pose.x, self.pose.y, self.pose.yaw + turn)
            self.headings.append(self.pose.yaw)
            return self.pose

        def collisions(self, carried=()) -> tuple[set[str], set[str]]:
            heading = math.remainder(self.pose.yaw, 2 * math.pi)
            return {"rug"} | ({"shelf_1"} if math.radians(40) < heading < math.radians(120) else set()), set()

    carried: list[str] = []
    grip = SimpleNamespace(carried_bodies=lambda: [7], carry=lambda: carried.append("carried"))
    stance = Stance.__new__(Stance)  # its turns alone, on the stand-ins
    stance.base, stance.grip = StandInBase(), grip  # type: ignore[assignment]
    struck = stance.turn_to(math.radians(90))
    assert struck == {"shelf_1"}  # the shelf stands in the way both ways round (yaw past 40 degrees, wrapped)
    assert math.radians(30) <= stance.base.pose.yaw <= math.radians(40)
    turns = np.diff([0.0, *stance.base.headings])
    assert np.abs(turns).max() <= TURN_STEP + 1e-9  # never a jump past what is checked
    assert len(carried) == len(stance.base.headings)  # what the hand holds went round with it
    assert stance.turn_to(math.radians(-30)) == set() and stance.base.pose.yaw == pytest.approx(math.radians(-30))
    assert stance.turn_to(math.radians(150)) == set()  # the long way round, clear of the shelf
    assert math.remainder(stance.base.pose.yaw - math.radians(150), 2 * math.pi) == pytest.approx(0.0, abs=1e-9)


def test_a_drive_stopped_against_something_a_few_centimetres_short_of_its_goal_has_arrived() -> None:
    """stance.stopped_short on a stand-in base: BLOCKED 6 cm short of the goal (localization put the
    counter nearer than the map has it), the base turns to the goal's heading and the drive counts
    as arrived, saying so; 40 cm short, or stopped by a timeout, it is still a failure."""
    import math
    from types import SimpleNamespace

    from conceptagent_ros.bodies.household.stance import Stance, stopped_short
    from conceptagent_ros.navigation.pybullet_base import DriveResult
    from conceptagent_ros.scene.geometry import Pose2D

    class StandInBase:
        def __init__(self, x: float) -> None:
            self.pose = Pose2D(x, 0.0, 0.0)

        @property
        def believed(self) -> Pose2D:
            return self.pose

        def turn(self, turn: float) -> Pose2D:
            self.pose = Pose2D(self.pose.x, self.pose.y, self.pose.yaw + turn)
            return self.pose

        def collisions(self, carried=()) -> tuple[set[str], set[str]]:
            return {"countertop_1"}, set()  # touched before the turn: it does not stop it

    def stopped(x: float, code: str = "BLOCKED") -> DriveResult:
        stance = Stance.__new__(Stance)  # its drives' ends alone, on the stand-ins
        stance.base = StandInBase(x)  # type: ignore[assignment]
        stance.grip = SimpleNamespace(carried_bodies=lambda: [], carry=lambda: None)  # type: ignore[assignment]
        stance.moved = lambda: None  # type: ignore[method-assign]
        result = DriveResult(False, code, "the robot touched countertop_1 at (0.94, 0.00)", 1.0, 5.0, stance.base.pose)
        after = stopped_short(stance, result, (1.0, 0.0), math.radians(90))
        if after.reached:
            assert stance.base.pose.yaw == pytest.approx(math.radians(90))
        return after

    near = stopped(0.94)
    assert near.reached and near.code == "" and "stopped 6 cm short" in near.message and "countertop_1" in near.message
    assert not stopped(0.6).reached and stopped(0.6).code == "BLOCKED"
    assert not stopped(0.94, "TIMEOUT").reached


def test_an_arm_left_out_is_tucked_when_the_next_skill_starts_its_hand_drawn_back_first() -> None:
    """Stance on stand-ins: the flag says tucked, but a door's push left the arm out, its hand under
    a worktop. Once the next skill starts (notice_posture), the tuck draws the hand straight back
    toward the mast (then up, still touching) and tucks the arm; an arm that stands tucked is left
    alone. A hand whose held thing is near something (cheese lifted beside a fridge's wall: the
    joint-space tuck dragged the fridge 18 cm, and every drive after it stopped against it,
    moderate_19) is drawn back the same way, though the hand itself touches nothing."""
    from types import SimpleNamespace

    from conceptagent_ros.bodies.household.posture import FREE_HAND_BACK
    from conceptagent_ros.bodies.household.stance import Stance
    from conceptagent_ros.navigation.pybullet_base import TUCKED
    from conceptagent_ros.scene.geometry import Pose2D
    from conceptagent_ros.world.robot_description import ARM_JOINTS

    class StandInArm:
        def __init__(self, angles: dict[str, float], touching: int, held_near: int = 0) -> None:
            self.angles, self.touching, self.moves, self.tucks = angles, touching, [], 0
            self.near = held_near

        def joint_angles(self) -> list[float]:
            return [self.angles[name] for name in ARM_JOINTS]

        def hand_touches(self, besides=()) -> bool:
            return self.touching > 0

        def held_near(self) -> bool:
            return self.near > 0

        def hand_pose(self) -> tuple[np.ndarray, np.ndarray]:
            return np.array([1.0, 0.0, 0.5]), np.array([0.0, 0.0, 0.0, 1.0])  # grasp_link's quaternion

        def hand_rotation(self) -> np.ndarray:
            return np.eye(3)

        def move_hand_straight(self, position, rotation, speed: float = 1.0) -> bool:
            self.moves.append(np.asarray(position))
            self.touching, self.near = self.touching - 1, self.near - 1
            return True

        def tuck(self, angles) -> None:
            self.tucks += 1
            self.angles = dict(angles)

    def stance_with(arm: StandInArm) -> Stance:
        stance = Stance.__new__(Stance)  # its posture alone, on the stand-ins
        stance.arm, stance.tucked = arm, True  # type: ignore[assignment]
        stance.base = SimpleNamespace(believed=Pose2D(0.0, 0.0, 0.0))  # type: ignore[assignment]
        stance.grip = SimpleNamespace(carried_bodies=lambda: [], held=None)  # type: ignore[assignment]
        return stance

    out = StandInArm({**TUCKED, "shoulder_lift_joint": -0.4, "elbow_joint": 1.2}, touching=2)
    left_out = stance_with(out)
    left_out.tuck()
    assert out.tucks == 0  # within a skill the flag stands
    left_out.notice_posture()  # a skill starts
    left_out.tuck()
    assert out.tucks == 1
    back, up = out.moves
    assert back == pytest.approx(np.array([1.0 - FREE_HAND_BACK, 0.0, 0.5]))  # level, toward the mast
    assert up == pytest.approx(np.array([1.0, 0.0, 0.6]))  # where it stood (the stand-in does not move), raised
    holding = StandInArm({**TUCKED, "shoulder_lift_joint": -0.4}, touching=0, held_near=1)
    lifted = stance_with(holding)
    lifted.tucked = False  # a pick ends with the arm out
    lifted.tuck()
    assert holding.tucks == 1 and len(holding.moves) == 1  # drawn back level, and then clear: not raised
    assert holding.moves[0] == pytest.approx(np.array([1.0 - FREE_HAND_BACK, 0.0, 0.5]))
    tucked = StandInArm(dict(TUCKED), touching=0)
    standing = stance_with(tucked)
    standing.notice_posture()
    standing.tuck()
    assert tucked.tucks == 0 and tucked.moves == []


def test_the_hand_rotation_is_the_frame_the_arm_is_moved_by(kitchen: HouseholdBody) -> None:
    """MobileArm.hand_rotation is the hand frame move_hand takes (closing, across, approach), not
    grasp_link's quaternion: given back, it turns the hand nowhere (a tuck's hand drawn back was
    handed the quaternion and the bench stopped on a ValueError)."""
    from conceptagent_ros.bodies.household.mobile_arm import mm_orientation

    assert kitchen.arm.hand_rotation().shape == (3, 3)
    assert abs(float(np.dot(mm_orientation(kitchen.arm.hand_rotation()), kitchen.arm.hand_pose()[1]))) > 0.9999


def test_the_torso_lifts_the_arm_to_a_book_on_a_high_shelf_and_lowers_it_to_drive() -> None:
    """pick(book_1) on the studio kitchen's 1.2 m shelf: out of reach pointing down from the
    shoulder's 0.90 m, in reach with the torso lifted. Judged on PyBullet: the torso's joint, the
    book risen off the shelf and staying with the hand as the torso goes down for the drive; the
    arm's kinematic copy puts the hand where the lifted physical arm has it."""
    body = HouseholdBody(load_scene("studio_kitchen"))
    try:
        p, c = body.p, body.client
        book, shelf = body.base.bodies["book_1"], body.base.bodies["shelf_1"]
        shelf_top = p.getAABB(shelf, physicsClientId=c)[1][2]
        assert body.execute(SkillCall("navigate_to", ("fridge_1",))).success  # the shelf's top is seen from there
        assert body.execute(SkillCall("navigate_to", ("book_1",))).success
        picked = body.execute(SkillCall("pick", ("book_1",)))
        assert picked.success, picked.message
        lift = p.getJointState(body.robot, body.arm.torso, physicsClientId=c)[0]
        assert lift > 0.1
        assert p.getAABB(book, physicsClientId=c)[0][2] > shelf_top + 0.1
        kin = body.arm.kinematics
        for slot, q in zip(kin.arm_slots, body.arm.joint_angles()):
            p.resetJointState(kin.robot, kin.movable[slot], q, physicsClientId=kin.client)
        copy_hand = p.getLinkState(kin.robot, kin.grasp_link, computeForwardKinematics=True, physicsClientId=kin.client)[4]
        assert np.linalg.norm(np.asarray(copy_hand) - body.arm.hand_pose()[0]) < 0.01
        assert body.execute(SkillCall("navigate_to", ("dining_table_1",))).success
        assert p.getJointState(body.robot, body.arm.torso, physicsClientId=c)[0] < 0.01
        hand = body.arm.hand_pose()[0]
        assert np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(book, physicsClientId=c)[0]) - hand) < 0.15
    finally:
        body.close()


def test_a_household_task_runs_end_to_end_on_the_body_with_its_report_and_picture(tmp_path, capsys) -> None:
    """bench --body pybullet on one task: the robot drives, opens the fridge, picks the apple and
    puts it on the fridge's shelf in PyBullet; the judge finds the goal on PyBullet's state; the
    report sets the body beside the symbolic run and the picture of the task is written."""
    import json

    from conceptagent_ros.cli.main import main

    tasks = tmp_path / "one.yaml"
    tasks.write_text("name: one\ntasks:\n- id: apple_to_fridge\n  scene: studio_kitchen\n"
                     "  instruction: put the apple in the fridge\n  goal: (in apple_1 fridge_1)\n")
    out = tmp_path / "out"
    # ideal senses: the report's and the picture's test, on a run with no failed skill to report
    assert main(["bench", "--tasks", str(tasks), "--body", "pybullet", "--sensing", "ideal", "--out", str(out)]) == 0
    episodes = json.loads((out / "results.json").read_text())["episodes"]
    assert [e["success"] for e in episodes] == [True]
    assert episodes[0]["wall_seconds"] > 0 and episodes[0]["skill_failures"] == []
    report = (out / "results.md").read_text()
    assert "| one | react | pybullet | 1 | 1/1 = 100%" in report and "| one | react | symbolic | 1 | 1/1 = 100%" in report
    picture = out / "pictures" / "react-s0-apple_to_fridge.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000
    assert "pictures/react-s0-apple_to_fridge.png" in report


def test_the_world_behaves_the_same_whatever_python_hashes(tmp_path) -> None:
    """Two interpreters with different string hashing load and settle the exported world to the same
    state, to the micrometre: a benchmark on the body repeats (it did not while static bodies were
    made static in set order, which reorders PyBullet's contact solving)."""
    import os
    import subprocess
    import sys

    script = ("import numpy as np\n"
              "from conceptagent_ros.bodies.household.body import HouseholdBody\n"
              "from conceptagent_ros.scene.loader import load_scene\n"
              "b = HouseholdBody(load_scene('studio_kitchen'))\n"
              "print(sorted((n, np.round(b.p.getBasePositionAndOrientation(i, physicsClientId=b.client)[0], 7).tolist())"
              " for n, i in b.base.bodies.items()))\n")
    states = []
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr[-2000:]
        states.append(run.stdout.strip().splitlines()[-1])
    assert states[0] == states[1]


def test_things_have_the_friction_their_world_file_gives_them(kitchen: HouseholdBody, tmp_path) -> None:
    """The exported world says each thing's friction (<surface><friction><ode><mu>, which Gazebo
    reads); PyBullet's SDF reader leaves it out, so the loader gives it: a thing held at 60 N does not
    slide out of rubber-padded fingers at PyBullet's default 0.5."""
    import xml.etree.ElementTree as ET

    from conceptagent_ros.world.export import export_world

    exported = export_world(kitchen.home, tmp_path)
    model = next(m for m in ET.parse(exported.sdf).getroot().iter("model") if m.get("name") == "apple_1")
    mu = float(model.findtext("link/collision/surface/friction/ode/mu"))
    assert mu >= 0.8
    assert kitchen.p.getDynamicsInfo(kitchen.base.bodies["apple_1"], -1, physicsClientId=kitchen.client)[1] == mu
    assert kitchen.p.getDynamicsInfo(kitchen.base.bodies["countertop_1"], -1, physicsClientId=kitchen.client)[1] == 0.5


def test_the_task_runs_on_the_body_seen_through_the_perception_pipeline(tmp_path) -> None:
    """run --body pybullet --perception camera: every image of the mast camera is fused into the
    perception pipeline's object map, and the planner reads the belief built from it (as through
    the ROS graph's perception and scene graph nodes); the apple ends on the dining table in PyBullet."""
    from conceptagent_ros.bodies.household.perceiving_body import PerceivingBody
    from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
    from conceptagent_ros.planning.task import TaskRequest

    frames: list[int] = []
    original = PerceivingBody._fuse

    def counted(self, frame) -> None:  # noqa: ANN001
        frames.append(len(self.map.objects))
        original(self, frame)

    PerceivingBody._fuse = counted  # type: ignore[method-assign]
    try:
        result = run_episode(EpisodeSpec(TaskRequest("put the apple on the dining table", task_id="apple_to_table"),
                                         "studio_kitchen", judge_goal="(in apple_1 dining_table_1)", body="pybullet",
                                         perception="camera"))
    finally:
        PerceivingBody._fuse = original  # type: ignore[method-assign]
    assert result.success, result
    assert len(frames) >= 24 and frames[-1] >= 10  # two looks around at least, a map of the kitchen


def test_a_pick_the_arm_could_not_reach_from_one_stance_is_tried_once_from_another() -> None:
    """The arm's first try at the apple is made to fail as UNREACHABLE (a stand-in for a table edge
    in the way): the base drives round to stand at least 45 degrees round the apple from where it
    stood, as PyBullet has it (within the drive's arrival tolerance), and the pick from there holds
    the apple; a second UNREACHABLE from the new stance too is the skill's failure, with no third
    try."""
    from conceptagent_ros.skills.contract import SkillOutcome

    body = HouseholdBody(load_scene("studio_kitchen"))
    try:
        assert body.execute(SkillCall("navigate_to", ("apple_1",))).success
        p, c = body.p, body.client
        apple = np.asarray(p.getBasePositionAndOrientation(body.base.bodies["apple_1"], physicsClientId=c)[0])
        first = body.base.pose
        real, tries = body.skills.execute, []

        def unreachable_at_first(call, watch, log):  # noqa: ANN001, ANN202 - ArmSkills.execute's signature
            tries.append((body.base.pose.x, body.base.pose.y))
            if len(tries) == 1:
                return SkillOutcome(call, False, "the arm did not reach the pre-grasp", "physical", "UNREACHABLE")
            return real(call, watch, log)

        body.skills.execute = unreachable_at_first
        picked = body.execute(SkillCall("pick", ("apple_1",)))
        assert picked.success and "another stance" in picked.message, picked.message
        assert len(tries) == 2
        before = np.arctan2(first.y - apple[1], first.x - apple[0])
        after = np.arctan2(tries[1][1] - apple[1], tries[1][0] - apple[0])
        # 45 degrees round the apple as seen, less what a 10 cm arrival tolerance 60 cm out turns that by
        assert abs(np.remainder(after - before + np.pi, 2 * np.pi) - np.pi) >= np.radians(35)
        judged = physical_household_state(p, c, body.base.bodies, body.robot, body.scene)
        assert ("holding", "apple_1") in judged.atoms

        def never_reached(call, watch, log):  # noqa: ANN001, ANN202
            tries.append((body.base.pose.x, body.base.pose.y))
            return SkillOutcome(call, False, "the arm did not reach above the place", "physical", "UNREACHABLE")

        body.skills.execute = never_reached
        placed = body.execute(SkillCall("place", ("apple_1", "countertop_1")))
        assert not placed.success and placed.code == "UNREACHABLE" and len(tries) <= 4
    finally:
        body.close()


def _reach_out_of(p, client, thing: int, pose) -> float:  # noqa: ANN001 - PyBullet and a Pose2D
    """How far from the base's middle (across the floor) a box-shaped thing's corners stand, read
    from PyBullet's shape and pose of it."""
    half = np.asarray(p.getCollisionShapeData(thing, -1, physicsClientId=client)[0][3]) / 2
    position, orientation = p.getBasePositionAndOrientation(thing, physicsClientId=client)
    turn = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half @ turn.T + position
    return float(np.max(np.hypot(corners[:, 0] - pose.x, corners[:, 1] - pose.y)))


# A pillow (a rigid 50 x 35 x 15 cm box in PyBullet) is wider every way than the fingers open (8 cm):
# the only grasps are across a corner, at the edge of the friction cone (mu >= 1 at 45 degrees; the
# grip gives 1.2), and the fingers closing on the near corners turned the pillow 23 degrees on the
# sofa in three tries. It held before the cabinet doors were hung at their outer faces, which moved
# no pillow but every later step of the shared physics a little: the pick was luck. A soft pillow
# compresses into a real hand; the rigid one wants a two-handed or a pinch-and-lift grasp, not built.
@pytest.mark.xfail(strict=True, reason="the pillow's corner grasp turns it on the sofa (NOT_HELD after 3 tries): "
                                       "no rigid grasp of a 15 cm pillow within the 8 cm fingers holds it")
def test_a_pillow_is_carried_turned_in_the_hand_through_a_door_to_the_bed() -> None:
    """easy_15 with realistic senses: a pillow (50 x 35 cm) picked from the apartment's sofa is
    carried tucked over the base, and held across the base its corners stand 40 cm from the base's
    middle, which struck the side of the bedroom's door. The hand turns it to stand out least: as
    PyBullet has the pillow, its corners are within 35 cm of the base's middle for the drive, the
    drive to the bed arrives, and the pillow goes onto the bed."""
    body = HouseholdBody(load_scene("apartment"), sensing="realistic")
    try:
        p, c = body.p, body.client
        pillow = body.base.bodies["pillow_1"]
        assert body.execute(SkillCall("navigate_to", ("pillow_1",))).success
        picked = body.execute(SkillCall("pick", ("pillow_1",)))
        assert picked.success, picked.message
        assert _reach_out_of(p, c, pillow, body.base.pose) < 0.35
        went = body.execute(SkillCall("navigate_to", ("bed_1",)))
        assert went.success, went.message
        assert _reach_out_of(p, c, pillow, body.base.pose) < 0.35
        placed = body.execute(SkillCall("place", ("pillow_1", "bed_1")))
        assert placed.success, placed.message
        judged = physical_household_state(p, c, body.base.bodies, body.robot, body.scene)
        assert ("in", "pillow_1", "bed_1") in judged.atoms
    finally:
        body.close()
