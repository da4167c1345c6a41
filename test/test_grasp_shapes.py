"""The grasp bench's generated shapes (bodies/tabletop/shapes.py): the same spec is the same shape,
development and held-out sets do not meet, and each URDF lies in PyBullet as its family says."""
from __future__ import annotations

import numpy as np
import pytest

from conceptagent_ros.bodies.tabletop.shapes import FAMILIES, parse_shape, shape, shape_set, shape_urdf_file
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.grasp_bench import object_set, parse_objects


def test_a_shape_is_the_same_on_every_call_and_sets_do_not_meet() -> None:
    assert shape("plate", 3) == shape("plate", 3) and shape("plate", 3) != shape("plate", 4)
    dev, heldout = shape_set("dev"), shape_set("heldout")
    assert len(dev) == len(heldout) == 10 * len(FAMILIES)
    assert not {s.name for s in dev} & {s.name for s in heldout}
    assert parse_objects("shapes:dev")[:2] == ["shape:box:0", "shape:box:1"]
    assert parse_objects("shape:plate:3,cube") == ["shape:plate:3", "cube"]
    for bad in ("shapes:all", "shape:teapot:1", "shape:plate", "shape:plate:x"):
        with pytest.raises(ConceptAgentError):
            parse_objects(bad)
    assert object_set("shape:plate:3") == "shape plate" and object_set("random:4") == "random_urdfs"


def test_thin_plates_and_discs_are_8_to_20_mm_thick_and_every_shape_fits_the_hand_one_way() -> None:
    for s in shape_set("dev") + shape_set("heldout"):
        if s.family in ("plate", "disc"):
            assert 0.008 <= s.size[-1] <= 0.02
        narrowest = min(s.size) if s.primitive == "box" else 2 * s.size[0]
        assert narrowest < 0.075, s  # the Panda's hand opens 8 cm


@pytest.mark.parametrize("spec, height", [("shape:cylinder_side:0", "diameter"), ("shape:cylinder_upright:0", "length"),
                                          ("shape:plate:0", "thickness")])
def test_each_shape_rests_on_the_table_as_its_family_lies(spec, height) -> None:
    """Set down on a plane in PyBullet, a cylinder on its side comes to rest as high as it is wide, an
    upright one as its length, a plate as its thickness."""
    p = pytest.importorskip("pybullet")
    s = parse_shape(spec)
    client = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        plane = p.createCollisionShape(p.GEOM_PLANE, physicsClientId=client)
        p.createMultiBody(0, plane, physicsClientId=client)
        body = p.loadURDF(shape_urdf_file(s), [0, 0, s.extent[2] / 2 + 0.003], physicsClientId=client)
        for _ in range(480):
            p.stepSimulation(physicsClientId=client)
        lo, hi = (np.asarray(v) for v in p.getAABB(body, physicsClientId=client))
        mass = p.getDynamicsInfo(body, -1, physicsClientId=client)[0]
    finally:
        p.disconnect(client)
    expected = {"diameter": lambda: 2 * s.size[0], "length": lambda: s.size[1], "thickness": lambda: s.size[2]}[height]()
    assert hi[2] - max(lo[2], 0.0) == pytest.approx(expected, abs=0.004)
    assert mass == pytest.approx(s.mass, rel=1e-3)
