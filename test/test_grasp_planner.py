"""The grasp planner on hand-built clouds: a box, an upright cylinder, a thin plate, each on a table;
an object too wide for the hand; an empty cloud, NaN points, an object out of reach. The geometry
is judged here with its own arithmetic (where the object is, how wide it is between the fingers,
whether the fingers stay above the table), not with the planner's helpers."""
from __future__ import annotations

import numpy as np
import pytest

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.grasp_planner import GraspPlanner
from conceptagent_ros.manipulation.robot_spec import ArmSpec, load_robot_spec

RNG_SEED = 7
SPACING = 0.004


def box_surface(centre, size, spacing=SPACING, bottom=False) -> np.ndarray:
    """Points on a box's faces (the bottom one only if asked: on a table nobody sees it)."""
    c, h = np.asarray(centre, float), np.asarray(size, float) / 2
    points = []
    for axis in range(3):
        others = [a for a in range(3) if a != axis]
        u = np.arange(-h[others[0]], h[others[0]] + 1e-9, spacing)
        v = np.arange(-h[others[1]], h[others[1]] + 1e-9, spacing)
        uu, vv = np.meshgrid(u, v)
        for sign in (-1, 1):
            if axis == 2 and sign == -1 and not bottom:
                continue
            face = np.zeros((uu.size, 3))
            face[:, others[0]], face[:, others[1]], face[:, axis] = uu.ravel(), vv.ravel(), sign * h[axis]
            points.append(face)
    return np.concatenate(points) + c


def cylinder_surface(base, radius, height, spacing=SPACING) -> np.ndarray:
    angles = np.arange(0, 2 * np.pi, spacing / radius)
    zs = np.arange(0, height + 1e-9, spacing)
    aa, zz = np.meshgrid(angles, zs)
    side = np.column_stack([radius * np.cos(aa.ravel()), radius * np.sin(aa.ravel()), zz.ravel()])
    rs = np.arange(0, radius, spacing)
    top = [np.column_stack([r * np.cos(np.arange(0, 2 * np.pi, spacing / max(r, spacing))),
                            r * np.sin(np.arange(0, 2 * np.pi, spacing / max(r, spacing)))]) for r in rs]
    cap = np.concatenate(top)
    cap = np.column_stack([cap, np.full(len(cap), height)])
    return np.concatenate([side, cap]) + np.asarray(base, float)


def table(half=0.3, centre=(0.5, 0.0), spacing=0.01) -> np.ndarray:
    xs = np.arange(centre[0] - half, centre[0] + half, spacing)
    ys = np.arange(centre[1] - half, centre[1] + half, spacing)
    xx, yy = np.meshgrid(xs, ys)
    return np.column_stack([xx.ravel(), yy.ravel(), np.zeros(xx.size)])


@pytest.fixture(scope="module")
def panda():
    return load_robot_spec("panda")


def _planner(panda, **kw) -> GraspPlanner:
    return GraspPlanner(panda.gripper, panda.arm, **kw)


def _finger_tips(candidate, gripper, opening: float | None = None) -> np.ndarray:
    """The four outer corners of the two fingertips in the world, the hand open to `opening` (the
    grasp's width by default; it comes in fully open)."""
    width = candidate.width if opening is None else opening
    x, y, z = candidate.rotation.T
    tips = []
    for side in (-1, 1):
        for edge in (-1, 1):
            tips.append(candidate.position + side * x * (width / 2 + gripper.finger_thickness)
                        + edge * y * gripper.finger_width / 2 + z * gripper.finger_depth / 2)
    return np.array(tips)


def test_a_box_is_grasped_across_its_narrow_side_above_the_table(panda) -> None:
    box = box_surface((0.5, 0.0, 0.03), (0.04, 0.06, 0.06))
    plan = _planner(panda).plan(box, table())
    best = plan.best
    assert best.width == pytest.approx(0.04, abs=0.006)  # across the 4 cm side, the only one that fits well
    assert abs(best.rotation[:, 0] @ np.array([1.0, 0.0, 0.0])) > 0.95
    assert np.linalg.norm(best.position[:2] - np.array([0.5, 0.0])) < 0.01
    assert _finger_tips(best, panda.gripper)[:, 2].min() > 0.0  # no finger in the table
    assert 0.0 < best.position[2] < 0.06  # between the fingers: the box, not the air above it
    assert plan.seconds > 0.0 and plan.considered >= len(plan.candidates)  # its speed: the grasp bench's figure


def test_an_upright_cylinder_is_grasped_through_its_axis(panda) -> None:
    can = cylinder_surface((0.45, 0.1, 0.0), 0.03, 0.12)
    plan = _planner(panda).plan(can, table())
    for candidate in plan.candidates[:3]:
        assert candidate.width == pytest.approx(0.06, abs=0.008)
        # the closing axis passes through the can's axis: the centre is on it, seen from above
        assert np.linalg.norm(candidate.position[:2] - np.array([0.45, 0.1])) < 0.01
        assert _finger_tips(candidate, panda.gripper)[:, 2].min() > 0.0


def test_a_thin_plate_on_the_table_has_no_grasp_that_keeps_the_fingers_out_of_the_table(panda) -> None:
    plate = box_surface((0.5, 0.0, 0.0025), (0.12, 0.12, 0.005))
    with pytest.raises(ManipulationError) as failure:
        _planner(panda).plan(plate, table())
    assert failure.value.code == "NO_GRASP_FOUND"


def test_a_thin_plate_standing_on_edge_is_grasped_across_its_thickness(panda) -> None:
    plate = box_surface((0.5, 0.0, 0.05), (0.006, 0.10, 0.10))
    best = _planner(panda).plan(plate, table()).best
    assert best.width == pytest.approx(0.006, abs=0.005)
    assert abs(best.rotation[:, 0][0]) > 0.95


def test_an_object_wider_than_the_open_hand_is_never_grasped_across_it(panda) -> None:
    # a drum 15 cm across: at most a shallow pinch of its wall (the tuned contact threshold lets
    # these through; see the planner's min_antipodal), never the hand around it
    drum = cylinder_surface((0.5, 0.0, 0.0), 0.075, 0.15)
    for candidate in _planner(panda).plan(drum, table()).candidates:
        assert candidate.width < panda.gripper.max_opening and candidate.contact_depth < 0.02
        centre_offset = np.linalg.norm(candidate.position[:2] - np.array([0.5, 0.0]))
        assert centre_offset > 0.06  # at the wall, not over the middle


def test_a_box_wider_than_the_hand_everywhere_has_no_grasp(panda) -> None:
    # a low, wide slab: 1 cm tall, too little above the table clearance for a finger to hold its edge
    slab = box_surface((0.5, 0.0, 0.005), (0.15, 0.15, 0.010))
    with pytest.raises(ManipulationError) as failure:
        _planner(panda).plan(slab, table())
    assert failure.value.code == "NO_GRASP_FOUND" and "0.080" in str(failure.value)


def test_a_crate_wider_than_the_hand_is_only_pinched_at_an_edge(panda) -> None:
    crate = box_surface((0.5, 0.0, 0.075), (0.15, 0.15, 0.15))
    for candidate in _planner(panda).plan(crate, table()).candidates:
        closing = candidate.rotation[:, 0]
        # never across a face (closing along x or y): only diagonally, across a vertical edge
        assert max(abs(closing[0]), abs(closing[1])) < 0.9 and candidate.width < panda.gripper.max_opening


def test_a_neighbour_between_the_fingers_rules_out_that_grasp(panda) -> None:
    box = box_surface((0.5, 0.0, 0.03), (0.04, 0.04, 0.06))
    # a second box 1.5 cm to the box's +x side: a grasp closing along x would pinch it too
    neighbour = box_surface((0.5 + 0.02 + 0.015 + 0.02, 0.0, 0.03), (0.04, 0.04, 0.06))
    alone = _planner(panda).plan(box, table())
    assert any(abs(c.rotation[:, 0][0]) > 0.95 for c in alone.candidates)  # without it, closing along x is fine
    plan = _planner(panda).plan(box, np.concatenate([table(), neighbour]))
    for candidate in plan.candidates:
        tips = _finger_tips(candidate, panda.gripper, panda.gripper.max_opening)
        # no fingertip of the open hand inside the neighbour
        inside = (np.abs(tips[:, 0] - 0.555) < 0.02) & (np.abs(tips[:, 1]) < 0.02) & (tips[:, 2] < 0.06)
        assert not inside.any()
        assert abs(candidate.rotation[:, 0][0]) < 0.95  # never straight along x, into the neighbour
    assert abs(plan.best.rotation[:, 0][1]) > 0.95  # the best closes along y, away from it


@pytest.mark.parametrize("cloud", [np.zeros((0, 3)), None, np.full((50, 3), np.nan), np.ones((5, 3))])
def test_no_usable_points_is_an_empty_cloud(panda, cloud) -> None:
    with pytest.raises(ManipulationError) as failure:
        _planner(panda).plan(cloud, table())
    assert failure.value.code == "EMPTY_CLOUD"


def test_nan_points_are_dropped_not_planned_on(panda) -> None:
    box = box_surface((0.5, 0.0, 0.03), (0.04, 0.06, 0.06))
    noisy = np.concatenate([box, np.full((200, 3), np.nan), np.array([[np.inf, 0.0, 0.0]])])
    best = _planner(panda).plan(noisy, np.concatenate([table(), np.full((10, 3), np.nan)])).best
    assert np.isfinite(best.position).all() and best.width == pytest.approx(0.04, abs=0.006)


def test_an_object_out_of_reach_is_unreachable(panda) -> None:
    far = box_surface((1.6, 0.0, 0.03), (0.04, 0.06, 0.06))
    with pytest.raises(ManipulationError) as failure:
        _planner(panda).plan(far, table(centre=(1.6, 0.0)))
    assert failure.value.code == "UNREACHABLE"


def test_the_arms_reachability_callback_decides(panda) -> None:
    box = box_surface((0.5, 0.0, 0.03), (0.04, 0.06, 0.06))
    asked = []

    def only_from_above(position: np.ndarray, quaternion: np.ndarray) -> bool:
        asked.append(position)
        from scipy.spatial.transform import Rotation

        return bool(Rotation.from_quat(quaternion).as_matrix()[:, 2][2] < -0.9)  # approach pointing down

    plan = GraspPlanner(panda.gripper, ArmSpec((0.0, 0.0, 0.0), 0.85), only_from_above).plan(box, table())
    assert asked and all(c.approach == "top" for c in plan.candidates)
    with pytest.raises(ManipulationError) as failure:
        GraspPlanner(panda.gripper, None, lambda p, q: False).plan(box, table())
    assert failure.value.code == "UNREACHABLE"


def _hand_lowest(candidate, gripper) -> float:
    """The lowest corner of the open hand (fingers and palm as one box), by this test's own arithmetic."""
    x, y, z = candidate.rotation.T
    half_x = max(gripper.max_opening / 2 + gripper.finger_thickness, gripper.palm_length / 2)
    half_y = max(gripper.finger_width, gripper.palm_width) / 2
    corners = [candidate.position + sx * half_x * x + sy * half_y * y + dz * z
               for sx in (-1, 1) for sy in (-1, 1)
               for dz in (gripper.finger_depth / 2, -(gripper.finger_depth / 2 + gripper.palm_depth))]
    return float(np.min(np.asarray(corners)[:, 2]))


def test_a_phone_on_a_table_the_camera_sees_little_of_is_never_taken_with_the_hand_below_the_table() -> None:
    """A 15 x 8 x 2 cm phone on a 40 cm table whose top around it is hidden (a mast camera sees the
    table past a tucked arm): without being told the support's height, side grasps closing upright
    put the lower finger and the palm into the table; told it, none goes below it."""
    mm = load_robot_spec("conceptagent_mm")
    phone = box_surface((2.75, 7.8, 0.41), (0.15, 0.08, 0.02), spacing=0.002)
    far_table = table(half=0.3, centre=(3.3, 7.8)) + np.array([0.0, 0.0, 0.4])  # only its far part is seen
    planner = GraspPlanner(mm.gripper, None)
    blind = planner.plan(phone, far_table)
    assert min(_hand_lowest(c, mm.gripper) for c in blind.candidates) < 0.38  # the defect this guards against
    told = planner.plan(phone, far_table, support_z=0.40)
    assert told.candidates and all(_hand_lowest(c, mm.gripper) >= 0.40 - 0.006 for c in told.candidates)
    best = told.best  # from above, across the phone's 8 cm
    assert best.approach == "top" and best.width == pytest.approx(0.08, abs=0.01)


def test_a_grasp_on_one_faces_points_alone_is_no_grasp(panda) -> None:
    """Points of a single face between the fingers (its top seen edge-on by a side approach) give
    two 'contacts' in one place: nothing to squeeze, and never a candidate."""
    top_only = box_surface((0.5, 0.0, 0.02), (0.06, 0.06, 0.04))
    top_only = top_only[top_only[:, 2] > 0.0399]  # the camera saw the top face alone
    try:
        plan = _planner(panda).plan(top_only, table())
    except ManipulationError as failure:
        assert failure.code == "NO_GRASP_FOUND"
        return
    assert all(c.width >= 0.004 for c in plan.candidates)


def _seen_from_above(thickness: float) -> tuple[np.ndarray, np.ndarray]:
    """An 18 x 5 cm remote `thickness` thick on a 40 cm table, seen from above: its top alone, and
    the table round it (not under it)."""
    remote = box_surface((0.5, 0.0, 0.4 + thickness / 2), (0.18, 0.05, thickness))
    top = remote[remote[:, 2] > 0.4 + thickness - 1e-6]
    around = table(half=0.4, centre=(0.5, 0.0)) + np.array([0.0, 0.0, 0.4])
    around = around[~((np.abs(around[:, 0] - 0.5) < 0.09) & (np.abs(around[:, 1]) < 0.025))]
    return top, around


def test_the_support_under_a_thing_seen_only_from_above_is_the_surface_round_it() -> None:
    """The remote's lowest seen point is its top; the table round it says where it rests. The
    floor beyond the table's edge does not pull that down, and with nothing seen round it there
    is no answer."""
    from conceptagent_ros.manipulation.clouds import support_height

    top, around = _seen_from_above(0.02)
    assert support_height(top, around) == pytest.approx(0.40, abs=1e-6)
    floor = table(half=0.4, centre=(0.5, 0.0))[:40]  # a strip of floor beside the remote, 40 cm down
    assert support_height(top, np.concatenate([around, floor])) == pytest.approx(0.40, abs=1e-6)
    assert support_height(top, around + np.array([5.0, 0.0, 0.0])) is None


@pytest.mark.parametrize("thickness", [0.008, 0.012, 0.02, 0.03])
def test_a_flat_thing_seen_only_from_above_is_taken_low_over_the_table_with_its_sides_filled_in(thickness) -> None:
    """Its top alone gives the fingers nothing to close on (NO_GRASP_FOUND); with walls from its
    outline down to the table, it is taken from above across its 5 cm, the fingertips between
    the table and its top, no part of the hand below the table."""
    from conceptagent_ros.manipulation.clouds import support_height, with_sides_to_support

    mm = load_robot_spec("conceptagent_mm")
    planner = GraspPlanner(mm.gripper, None)
    top, around = _seen_from_above(thickness)
    support = support_height(top, around)
    with pytest.raises(ManipulationError):
        planner.plan(top, around, support_z=support)
    walled = with_sides_to_support(top, support)
    assert float(walled[:, 2].min()) < 0.40 + 0.004 and len(walled) > len(top)
    best = planner.plan(walled, around, support_z=support).best
    assert best.approach == "top" and best.width == pytest.approx(0.05, abs=0.008)
    tips = _finger_tips(best, mm.gripper)[:, 2]
    assert 0.40 < tips.min() < 0.40 + thickness  # the fingertips below its top, above the table
    assert _hand_lowest(best, mm.gripper) >= 0.40 - 0.006
    # a thing whose sides were seen is left as it is
    seen = box_surface((0.5, 0.0, 0.4 + thickness / 2), (0.18, 0.05, thickness))
    assert len(with_sides_to_support(seen, 0.40)) == len(seen)


def _noisy_plate_on_table(rng: np.random.Generator, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """A 12 mm plate, 12 x 5 cm, on a 40 cm table, both seen from above through depth noise of
    `sigma` (metres, along z): the plate's top and the table round it, each point's height
    scattered, and a few of the table's points thrown 3.5 sigma up beside the plate's long sides
    (the noise's tail, where the fingers go)."""
    top, around = _seen_from_above(0.012)
    top = top + np.column_stack([np.zeros((len(top), 2)), rng.normal(0.0, sigma, len(top))])
    around = around + np.column_stack([np.zeros((len(around), 2)), rng.normal(0.0, sigma, len(around))])
    grains = np.array([[0.5 + dx, side * 0.035, 0.4 + 3.5 * sigma] for dx in (-0.04, 0.0, 0.04) for side in (-1, 1)])
    return top, np.concatenate([around, grains])


def test_a_plate_seen_through_depth_noise_is_taken_low_over_the_table() -> None:
    """Depth noise as the tabletop's cameras have it (3 mm) scatters the table's top over as much as
    the plate is thick, and throws grains of it up where the fingertips go: the support's noisy
    points are taken as the plane they scatter about, lone grains are no obstacle, and the plate's
    sides, which no camera can tell from its top, are filled in all round. The fingertips end
    between the table and the plate's top."""
    from conceptagent_ros.manipulation.clouds import as_resting

    panda = load_robot_spec("panda")
    top, around = _noisy_plate_on_table(np.random.default_rng(RNG_SEED), 0.003)
    seen, support = as_resting(top, around)
    assert support is not None and abs(support - 0.40) < 0.006
    best = GraspPlanner(panda.gripper, None).plan(seen, around, support_z=support).best
    assert best.approach == "top" and best.width == pytest.approx(0.05, abs=0.012)
    tips = _finger_tips(best, panda.gripper)[:, 2]
    assert 0.40 < tips.min() < 0.40 + 0.012


def test_a_real_obstacle_beside_a_plate_is_not_taken_for_noise() -> None:
    """Lone points just above the support are grains of noise; a thing standing there, seen in many
    points, is not, and a grasp whose finger would come down on it is not offered."""
    from conceptagent_ros.manipulation.clouds import as_resting
    from conceptagent_ros.manipulation.grasp_planner import lone_grains

    # 2 cm blocks tight against both long sides of the plate, along its whole length
    blocks = np.concatenate([box_surface((0.5, side * 0.04, 0.41), (0.18, 0.02, 0.02)) for side in (-1, 1)])
    grains = np.array([[0.2, 0.2, 0.41], [0.8, -0.2, 0.408]])
    flat = table(half=0.4, centre=(0.5, 0.0)) + np.array([0.0, 0.0, 0.4])
    scene = np.concatenate([flat, grains, blocks])
    lone = lone_grains(scene, scene[:, 2] <= 0.403, 0.40)
    assert lone[len(flat):len(flat) + 2].all() and not lone[len(flat) + 2:].any() and not lone[:len(flat)].any()

    panda = load_robot_spec("panda")
    top, around = _noisy_plate_on_table(np.random.default_rng(RNG_SEED), 0.003)
    seen, support = as_resting(top, around)
    try:
        plan = GraspPlanner(panda.gripper, None).plan(seen, np.concatenate([around, blocks]), support_z=support)
    except ManipulationError as failure:
        assert failure.code == "NO_GRASP_FOUND"
        return
    # nothing across the 5 cm from above any more: a finger would land on a block
    for candidate in plan.candidates:
        assert not (candidate.approach == "top" and abs(candidate.rotation[:, 0][1]) > 0.9)
