"""Opening and closing planned from hand-built fronts: a drawer front with a handle bar and without,
a door with its handle near one edge, an opening measured from a moved front. The robot stands at
the origin; the fronts face it (their outward normal is -x)."""
from __future__ import annotations

import numpy as np
import pytest
from test_grasp_planner import box_surface

from conceptagent_ros.manipulation.articulation_planner import (
    door_frame,
    door_opening,
    drawer_opening,
    front_geometry,
    plan_door,
    plan_door_push,
    plan_door_push_over,
    plan_drawer,
    rolled_over,
)
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.robot_spec import load_robot_spec

BASE = (0.0, 0.0, 0.0)


def front(x=0.6, y=0.0, z=0.2, width=0.24, height=0.08, spacing=0.004) -> np.ndarray:
    """A vertical panel in the plane x = `x`, centred at (y, z)."""
    ys = np.arange(y - width / 2, y + width / 2 + 1e-9, spacing)
    zs = np.arange(z - height / 2, z + height / 2 + 1e-9, spacing)
    yy, zz = np.meshgrid(ys, zs)
    return np.column_stack([np.full(yy.size, x), yy.ravel(), zz.ravel()])


def bar(x=0.6, y=0.0, z=0.2, length=0.10) -> np.ndarray:
    """A horizontal handle bar 2.5 cm proud of the front toward the robot."""
    return box_surface((x - 0.025, y, z), (0.012, length, 0.012), spacing=0.003, bottom=True)


@pytest.fixture(scope="module")
def gripper():
    return load_robot_spec("panda").gripper


def test_a_drawer_with_a_handle_is_pulled_straight_toward_the_robot(gripper) -> None:
    plan = plan_drawer(np.concatenate([front(), bar()]), BASE, gripper, "open", 0.12)
    assert plan.grip == "handle"
    assert plan.grasp_position[1:] == pytest.approx([0.0, 0.2], abs=0.01)
    # the bar (x 0.569-0.581) between the fingers, from the palm to the tips, and the tips short
    # of the front (x 0.6): pressed on it, a fingertip slid into the gap round a drawer's front
    tips = plan.grasp_position[0] + gripper.finger_depth / 2
    assert plan.grasp_position[0] - gripper.finger_depth / 2 < 0.569 and 0.581 < tips < 0.6 - 0.01
    assert plan.grasp_rotation[:, 2] @ np.array([1.0, 0.0, 0.0]) > 0.99  # approach into the front
    assert abs(plan.grasp_rotation[:, 0][2]) > 0.99  # fingers close up and down across the bar
    pull = plan.waypoints[-1] - plan.grasp_position
    assert pull == pytest.approx(np.array([-0.12, 0.0, 0.0]), abs=1e-6)
    steps = np.diff(np.array([plan.grasp_position, *plan.waypoints]), axis=0)
    assert (np.linalg.norm(steps, axis=1) <= 0.0201).all()  # small steps along the way


def test_closing_a_drawer_pushes_it_back(gripper) -> None:
    plan = plan_drawer(np.concatenate([front(x=0.48), bar(x=0.48)]), BASE, gripper, "close", 0.12)
    assert plan.waypoints[-1] - plan.grasp_position == pytest.approx(np.array([0.12, 0.0, 0.0]), abs=1e-6)


def test_a_handle_high_enough_is_still_held_level_with_the_floor_known(gripper) -> None:
    plan = plan_drawer(np.concatenate([front(), bar()]), BASE, gripper, "open", 0.1, floor_z=0.0)
    assert plan.grip == "handle" and plan.grasp_rotation[:, 2] @ np.array([1.0, 0.0, 0.0]) > 0.99


def low_drawer() -> np.ndarray:
    """A bottom drawer: its front 1.5-8.5 cm above the floor (z = 0), its handle bar's middle at 5 cm,
    too low for the open hand held level (its housing reaches 10 cm below the fingers' middle)."""
    return np.concatenate([front(z=0.05, height=0.07), bar(z=0.05)])


def test_a_handle_too_low_to_hold_is_pushed_closed_by_the_fingers_sides(gripper) -> None:
    plan = plan_drawer(low_drawer(), BASE, gripper, "close", 0.09, floor_z=0.0)
    assert plan.grip == "push"
    x, z = plan.grasp_rotation[:, 0], plan.grasp_rotation[:, 2]
    assert z[2] < -0.99  # pointing down: the arm's pose at table height
    assert abs(x[1]) > 0.99  # fingers side by side along the front: the housing lies along it
    bar_face = 0.6 - 0.025 - 0.006
    fingers_near_side = plan.grasp_position[0] + gripper.finger_width / 2
    assert bar_face - 0.008 < fingers_near_side < bar_face  # against the bar's face, not in it
    tips = plan.grasp_position[2] - gripper.finger_depth / 2
    assert gripper.clearance <= tips < 0.05  # below the bar's middle, above the floor
    assert plan.waypoints[-1] - plan.grasp_position == pytest.approx(np.array([0.09, 0.0, 0.0]), abs=1e-6)
    # at the end of the push the housing (half a palm toward the cabinet) stops short of the cabinet's front
    assert plan.waypoints[-1][0] + gripper.palm_width / 2 < 0.6 + 0.09


def test_a_handle_too_low_to_hold_is_opened_by_pressing_on_its_top_and_dragging(gripper) -> None:
    plan = plan_drawer(low_drawer(), BASE, gripper, "open", 0.1, floor_z=0.0)
    assert plan.grip == "press"
    assert plan.grasp_rotation[:, 2][2] < -0.99 and abs(plan.grasp_rotation[:, 0][1]) > 0.99
    tips = plan.grasp_position[2] - gripper.finger_depth / 2
    bar_top = 0.05 + 0.006
    assert bar_top - 0.01 < tips < bar_top  # pressed a few mm into the bar's top
    finger_back = plan.grasp_position[0] + gripper.finger_width / 2
    assert finger_back > 0.6 - 0.031 + 0.005  # at least 5 mm of fingertip over the bar
    assert plan.grasp_position[0] + gripper.palm_width / 2 <= 0.6  # the housing clears the front above
    assert plan.waypoints[-1] - plan.grasp_position == pytest.approx(np.array([-0.1, 0.0, 0.0]), abs=1e-6)


def test_a_press_goes_into_the_bars_top_face_not_above_the_highest_stray_point(gripper) -> None:
    # a noisy camera throws a few of the bar's points some millimetres up: the fingertips pressed 4 mm
    # below the highest point would only graze the bar, and drag nothing
    cloud = low_drawer()
    rng = np.random.default_rng(0)
    top = cloud[(cloud[:, 2] > 0.0559) & (cloud[:, 0] < 0.58)]
    strays = top[rng.choice(len(top), 5, replace=False)] + np.array([0.0, 0.0, 0.008])
    plan = plan_drawer(np.concatenate([cloud, strays]), BASE, gripper, "open", 0.1, floor_z=0.0)
    assert plan.grip == "press"
    tips = plan.grasp_position[2] - gripper.finger_depth / 2
    bar_top = 0.05 + 0.006
    assert bar_top - 0.01 < tips < bar_top - 0.002


def test_a_low_handle_too_flat_to_press_on_is_held_pitched_down_instead(gripper) -> None:
    flat = box_surface((0.6 - 0.009, 0.0, 0.05), (0.012, 0.10, 0.012), spacing=0.003, bottom=True)  # 1.5 cm proud
    plan = plan_drawer(np.concatenate([front(z=0.05, height=0.07), flat]), BASE, gripper, "open", 0.1, floor_z=0.0)
    assert plan.grip == "handle" and plan.grasp_rotation[:, 2][2] < -0.3  # pitched down, not pressed


def test_a_drawer_without_a_handle_is_taken_by_its_top_edge_from_above(gripper) -> None:
    plan = plan_drawer(front(), BASE, gripper, "open", 0.1)
    assert plan.grip == "edge"
    assert plan.grasp_rotation[:, 2][2] < -0.99  # approach from above
    assert abs(plan.grasp_rotation[:, 0][0]) > 0.99  # fingers close across the panel
    fingertips = plan.grasp_position[2] + gripper.finger_depth / 2
    assert 0.24 - gripper.finger_depth < plan.grasp_position[2] < 0.24 and fingertips < 0.24 + gripper.finger_depth


def test_a_door_swings_about_the_edge_opposite_its_handle(gripper) -> None:
    door = np.concatenate([front(width=0.3, height=0.4, z=0.3, spacing=0.006), bar(y=-0.11, z=0.3, length=0.03)])
    plan = plan_door(door, BASE, gripper, "open", np.radians(80))
    assert plan.hinge is not None and plan.hinge[1] == pytest.approx(0.15, abs=0.01)  # the far edge from the handle
    radius = np.linalg.norm((plan.grasp_position - plan.hinge)[:2])
    for point in plan.waypoints:  # on the arc about the hinge
        assert np.linalg.norm((point - plan.hinge)[:2]) == pytest.approx(radius, abs=1e-6)
        assert point[2] == pytest.approx(plan.grasp_position[2], abs=1e-6)
    assert plan.waypoints[0][0] < plan.grasp_position[0]  # the handle comes toward the robot first
    swept = np.arctan2(*(plan.waypoints[-1] - plan.hinge)[1::-1]) - np.arctan2(*(plan.grasp_position - plan.hinge)[1::-1])
    assert abs((swept + np.pi) % (2 * np.pi) - np.pi) == pytest.approx(np.radians(80), abs=1e-6)
    # the hand turns with the door: at the end it still faces the door's (turned) front
    assert plan.rotations[-1][:, 2] @ plan.grasp_rotation[:, 2] == pytest.approx(np.cos(np.radians(80)), abs=1e-6)


def test_a_door_without_a_handle_cannot_be_held(gripper) -> None:
    with pytest.raises(ManipulationError) as failure:
        plan_door(front(width=0.3, height=0.4), BASE, gripper, "open", 1.0)
    assert failure.value.code == "NO_GRASP_FOUND"


def test_the_opening_is_measured_from_the_front_as_seen(gripper) -> None:
    closed = front_geometry(np.concatenate([front(), bar()]), BASE)
    assert drawer_opening(np.concatenate([front(x=0.6 - 0.087), bar(x=0.6 - 0.087)]), closed) == pytest.approx(0.087,
                                                                                                               abs=0.003)


@pytest.mark.parametrize("cloud", [np.zeros((0, 3)), np.full((40, 3), np.nan)])
def test_no_front_points(gripper, cloud) -> None:
    with pytest.raises(ManipulationError) as failure:
        plan_drawer(cloud, BASE, gripper, "open", 0.1)
    assert failure.value.code == "EMPTY_CLOUD"


def test_a_horizontal_surface_is_not_a_front(gripper) -> None:
    xs, ys = np.meshgrid(np.arange(0.4, 0.7, 0.01), np.arange(-0.1, 0.1, 0.01))
    shelf = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, 0.2)])
    with pytest.raises(ManipulationError) as failure:
        plan_drawer(shelf, BASE, gripper, "open", 0.1)
    assert failure.value.code == "EMPTY_CLOUD" and "vertical front" in str(failure.value)


def pulled_out(x_front=0.5, depth=0.15, y=0.0, z=0.2, width=0.24, height=0.08, spacing=0.003) -> np.ndarray:
    """A drawer pulled out: its front (sparse, seen at a grazing angle) and both sides (densely seen)."""
    sides = []
    xs = np.arange(x_front, x_front + depth, spacing)
    zs = np.arange(z - height / 2, z + height / 2 + 1e-9, spacing)
    xx, zz = np.meshgrid(xs, zs)
    for side_y in (y - width / 2, y + width / 2):
        sides.append(np.column_stack([xx.ravel(), np.full(xx.size, side_y), zz.ravel()]))
    return np.concatenate([front(x=x_front, y=y, z=z, width=width, height=height, spacing=0.008), *sides])


def test_a_pulled_out_drawers_front_is_found_among_its_sides_and_its_opening_measured(gripper) -> None:
    cloud = pulled_out(x_front=0.513)
    front_only = front(x=0.513, spacing=0.008)
    sides = len(cloud) - len(front_only)
    assert sides > 2 * len(front_only)  # the sides outnumber the front, as the side cameras see them
    seen = front_geometry(cloud, BASE)
    assert seen.normal == pytest.approx([-1.0, 0.0, 0.0], abs=0.05)
    closed = front_geometry(np.concatenate([front(), bar()]), BASE)
    assert drawer_opening(cloud, closed) == pytest.approx(0.087, abs=0.004)


def upright_door(x=0.6, angle_deg=0.0) -> np.ndarray:
    """A 60 x 100 cm door facing the robot (-x), hinged at its +y edge, an upright bar 4 cm from its
    -y edge standing 3 cm proud; swung open by `angle_deg` about its hinge toward the robot."""
    panel = front(x=x, y=0.0, z=0.8, width=0.6, height=1.0, spacing=0.01)
    handle = box_surface((x - 0.02, -0.26, 0.8), (0.03, 0.02, 0.25), spacing=0.004, bottom=True)
    points = np.concatenate([panel, handle])
    hinge = np.array([x, 0.3, 0.0])
    turn = np.radians(angle_deg)  # the free edge (at -y) swings toward the robot (-x)
    c, s = np.cos(turn), np.sin(turn)
    rel = points - hinge
    return np.column_stack([hinge[0] + c * rel[:, 0] + s * rel[:, 1], hinge[1] - s * rel[:, 0] + c * rel[:, 1], points[:, 2]])


def test_an_upright_bar_is_held_with_the_fingers_closing_along_the_front_short_of_its_face(gripper) -> None:
    plan = plan_door(upright_door(), BASE, gripper, "open", np.radians(35))
    assert plan.hinge is not None and plan.hinge[1] == pytest.approx(0.3, abs=0.01)
    assert abs(plan.grasp_rotation[:, 0][1]) > 0.99  # closing across the bar, along the front
    tips = plan.grasp_position + plan.grasp_rotation[:, 2] * gripper.finger_depth / 2
    assert 0.6 - 0.03 <= tips[0] < 0.6 - 0.5 * gripper.clearance  # within the bar's depth, short of the face
    assert plan.grasp_position[1] == pytest.approx(-0.26, abs=0.01)



def test_an_upright_bar_seen_in_part_among_stray_points_is_held_on_the_bar(gripper) -> None:
    """As a base cabinet's door is seen from where the arm works: only the bar's top 6 cm (the arm
    hides the rest), and a strip of the carcass's top edge standing 1 cm proud across the door. The
    hand closes on the seen part's middle, not on the mean of all proud points (2 cm off the bar),
    and across the bar: judged on all proud points, the strip made the bar a level one, and the
    fingers closed up and down beside it."""
    door = upright_door()
    seen = door[~((door[:, 0] < 0.6 - 0.005) & (door[:, 2] < 0.865))]  # the bar's points below its top 6 cm
    edge = front(x=0.6 - 0.012, y=0.15, z=1.3, width=0.3, height=0.01, spacing=0.005)
    plan = plan_door(np.concatenate([seen, edge]), BASE, gripper, "open", np.radians(35))
    assert abs(plan.grasp_rotation[:, 0][1]) > 0.99  # closing along the front
    assert plan.grasp_position[1] == pytest.approx(-0.26, abs=0.006)
    assert 0.85 <= plan.grasp_position[2] <= 0.91  # within the seen part, short of the bar's top (0.925)

def test_a_door_seen_through_noisy_depth_is_held_on_its_upright_bar(gripper) -> None:
    """A base unit's door as a noisy RGB-D camera sees it from a stoop: every point off the front
    by 6 mm (one standard deviation) along the view, and a strip of the worktop's edge 1 cm proud
    across the door's top. The front's plane is the whole door's (RANSAC's 4 mm band held a strip of
    it, turned off it, and a third of the door stood proud); the hand closes across the bar, along
    the front (the stray points spread wider than the bar is tall), on the bar."""
    rng = np.random.default_rng(3)
    panel = front(x=0.6, y=0.0, z=0.8, width=0.6, height=1.0, spacing=0.005)
    handle = box_surface((0.6 - 0.02, -0.26, 0.8), (0.03, 0.02, 0.25), spacing=0.003, bottom=True)
    edge = front(x=0.6 - 0.01, y=0.0, z=1.3, width=0.6, height=0.01, spacing=0.005)
    points = np.concatenate([panel, handle, edge])
    view = points / np.linalg.norm(points, axis=1, keepdims=True)  # the rays from the camera at the origin
    noisy = points + view * rng.normal(0.0, 0.006, (len(points), 1))
    plan = plan_door(noisy, BASE, gripper, "open", np.radians(35))
    assert abs(plan.grasp_rotation[:, 0][1]) > 0.99  # closing across the upright bar
    assert plan.grasp_position[1] == pytest.approx(-0.26, abs=0.008)
    assert 0.7 <= plan.grasp_position[2] <= 0.9  # on the bar (0.675-0.925)
    assert plan.hinge is not None and plan.hinge[1] == pytest.approx(0.3, abs=0.02)


def test_a_grasp_rolled_over_closes_across_the_same_bar_from_the_same_side(gripper) -> None:
    """Half a turn about the approach: the same approach and positions at every step, the closing
    axis reversed (the fingers are alike), still a proper rotation."""
    plan = plan_door(upright_door(), BASE, gripper, "open", np.radians(35))
    rolled = rolled_over(plan)
    assert rolled.grasp_position == pytest.approx(plan.grasp_position)
    assert rolled.waypoints == plan.waypoints
    for before, after in zip((plan.grasp_rotation, *plan.rotations), (rolled.grasp_rotation, *rolled.rotations)):
        assert after[:, 2] == pytest.approx(before[:, 2])
        assert after[:, 0] == pytest.approx(-before[:, 0])
        assert np.linalg.det(after) == pytest.approx(1.0)


def test_a_door_is_pushed_on_along_its_inside_from_where_the_pull_left_it(gripper) -> None:
    door = door_frame(front_geometry(upright_door(), BASE), gripper=gripper)
    assert door.width == pytest.approx(0.6, abs=0.01)
    shoulder = np.array([0.0, -0.5, 0.8])
    plan = plan_door_push(door, shoulder, gripper, np.radians(30), np.radians(90), 0.4)
    assert plan.grip == "push"
    for angle, point, rotation in zip(np.linspace(np.radians(30), np.radians(90), len(plan.waypoints) + 1)[1:],
                                      plan.waypoints, plan.rotations):
        across = float((point - door.hinge) @ door.outer(angle))
        assert -0.06 < across < -0.005  # on the inside of the door as it stands then, clear of it
        assert abs(rotation[:, 2][2]) < 1e-9 and abs(rotation[:, 0][2]) > 0.99  # level, the fingers closing up and down
    # the door's far end: 90 degrees open, the point 40 cm out toward the robot from the hinge
    assert (plan.waypoints[-1] - door.hinge) @ door.out == pytest.approx(0.4, abs=0.04)
    assert door.out[0] < -0.99 and door.turn != 0.0


def test_a_low_door_is_pushed_on_from_above_with_the_hand_in_the_gap_behind_it(gripper) -> None:
    """A base cabinet's door (its top below the shoulder): the hand points down, its narrow side against
    the door's inner face, between the door and the front, fingertips below the top edge."""
    door = door_frame(front_geometry(upright_door(), BASE), gripper=gripper)
    top = 0.45
    plan = plan_door_push_over(door, top, gripper, np.radians(25), np.radians(90), 0.45)
    angles = np.linspace(np.radians(25), np.radians(90), len(plan.waypoints) + 1)
    for angle, point, rotation in zip(angles, (plan.grasp_position, *plan.waypoints),
                                      (plan.grasp_rotation, *plan.rotations)):
        assert rotation[:, 2] @ np.array([0.0, 0.0, -1.0]) > 0.999  # pointing down
        assert abs(rotation[:, 0] @ door.radial(angle)) > 0.999  # the fingers close along the door
        across = float((point - door.hinge) @ door.outer(angle))
        assert -(gripper.palm_width / 2 + 0.02) < across < -gripper.palm_width / 2  # its side just inside the door
        in_front = float((point - door.hinge) @ door.out)
        assert in_front > 0.0  # out of the cabinet's front: in the gap, not over the carcass
        tips = point[2] - gripper.finger_depth / 2
        assert top - 0.12 < tips < top - 0.03
    assert (plan.waypoints[-1] - door.hinge) @ door.out == pytest.approx(0.45, abs=0.05)
    with pytest.raises(ManipulationError, match="0 to 135"):
        plan_door_push_over(door, top, gripper, np.radians(90), np.radians(30), 0.45)


def test_a_low_door_is_pushed_shut_from_above_along_its_outer_face(gripper) -> None:
    """A shut: the hand pointing down over the top edge, beside the door's outer face (the side a
    shutting door moves toward), swept from the open angle back to shut, where it stands a
    clearance before the shut door's front."""
    door = door_frame(front_geometry(upright_door(), BASE), gripper=gripper)
    top = 0.45
    start, end = np.radians(85), 0.0
    plan = plan_door_push_over(door, top, gripper, start, end, 0.3, face="outer")
    assert plan.action == "close" and plan.grip == "push"
    poses = (plan.grasp_position, *plan.waypoints)
    for angle, point, rotation in zip(np.linspace(start, end, len(poses)), poses, (plan.grasp_rotation, *plan.rotations)):
        across = float((point - door.hinge) @ door.outer(angle))
        assert gripper.palm_width / 2 < across < gripper.palm_width / 2 + 0.02  # beside the outer face, clear of it
        assert rotation[:, 2] @ np.array([0.0, 0.0, -1.0]) > 0.999
        assert top - 0.12 < point[2] - gripper.finger_depth / 2 < top - 0.03
    assert 0.0 < float((poses[-1] - door.hinge) @ door.out) < 0.06  # at the end: before the shut door's front
    with pytest.raises(ManipulationError, match="0 to 135"):  # a push on the outer face only shuts
        plan_door_push_over(door, top, gripper, np.radians(30), np.radians(90), 0.3, face="outer")


def test_how_far_a_door_stands_open_is_measured_from_its_points(gripper) -> None:
    door = door_frame(front_geometry(upright_door(), BASE), gripper=gripper)
    for degrees in (0.0, 25.0, 60.0, 88.0):
        seen = upright_door(angle_deg=degrees)
        assert np.degrees(door_opening(seen, door.out)) == pytest.approx(degrees, abs=2.0)


def test_a_plane_fit_is_the_same_plane_on_every_call() -> None:
    """open3d's RANSAC picks among equally good planes by thread timing unless run on one thread: the
    same noisy points gave one of three planes from call to call, and a body's run could not be repeated."""
    from conceptagent_ros.manipulation.clouds import fit_plane

    rng = np.random.default_rng(0)
    floor = np.c_[rng.uniform(0, 1, 3000), rng.uniform(0, 1, 3000), rng.normal(0, 0.003, 3000)]
    points = np.vstack([floor, rng.uniform(0, 1, (1500, 3))])
    fits = {tuple(np.r_[plane.normal, plane.offset]) for plane in (fit_plane(points) for _ in range(10)) if plane}
    assert len(fits) == 1
