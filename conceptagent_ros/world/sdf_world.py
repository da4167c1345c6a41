"""A scene as an SDFormat 1.9 world that Gazebo (gz sim) and PyBullet (`loadSDF`) both load.

Everything stands where the embedded household draws it (scene/house_geometry.layout), so the
world a simulator shows is the world the synthetic camera shows:
- floor, walls with doorways (world/floor_plan), a sun and a light in every room;
- furniture as static boxes named by their scene ids;
- containers that open as articulated models: a carcass open at the front (its back, sides, top and
  bottom), and a door on a revolute hinge at one edge of the front, or a drawer on a prismatic
  joint (drawers and dressers), each with a handle; they are heavy, not fixed, as a fridge is;
- things the robot can carry as dynamic models with a mass and the inertia of their box.

What keeps one file loadable by both: every model's root link sits at the model's own frame (the
geometry is placed by the collisions' and visuals' poses; PyBullet ignores a root link's pose), a
child link's pose is given in the model frame (both read it so), no joint names the world as its
parent (PyBullet refuses that), and `<static>` is honoured by Gazebo and, in PyBullet, by whoever
loads the file (world/pybullet_world.py gives static models zero mass).
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conceptagent_ros.scene.house_geometry import (
    PANEL,
    SHELF_TOP,
    SLIDING,
    Box,
    front_of,
    has_shelf,
    solid_parts,
    top_drawer_height,
)
from conceptagent_ros.scene.model import Scene, SceneObject
from conceptagent_ros.world.floor_plan import FloorPlan

if TYPE_CHECKING:  # house.py reads the handles' depth from here
    from conceptagent_ros.world.house import House

SDF_VERSION = "1.9"
DOOR_OPENS = 1.9  # radians a door swings out
HANDLE_PROUD = 0.035  # how far a handle stands out of a door or drawer front
# kilograms by category; other carried things weigh ITEM_MASS
MASSES = {"apple": 0.15, "tomato": 0.12, "potato": 0.2, "lettuce": 0.4, "bread": 0.4, "egg": 0.06, "milk": 1.05,
          "butter": 0.25, "cheese": 0.3, "bowl": 0.3, "plate": 0.4, "pan": 1.2, "pot": 1.5, "cup": 0.2, "mug": 0.3,
          "knife": 0.1, "fork": 0.05, "spoon": 0.05, "book": 0.5, "laptop": 1.5, "box": 0.3, "pillow": 0.5,
          "towel": 0.3, "keys": 0.05, "credit_card": 0.005, "cell_phone": 0.18, "newspaper": 0.2}
ITEM_MASS = 0.25
# Coulomb friction of the things a hand picks up (PyBullet multiplies the two bodies' values: with
# the fingers' 1.2, a grip of 1.2, as rubber pads on plastic or ceramic; pybullet_data's objects,
# on which the grasp planner was developed, say 1.0 too). Without it PyBullet's default 0.5 made a
# 9 cm cup squeezed at 60 N slip out of the hand as it rose.
ITEM_FRICTION = 1.0
WALL_MOUNT = "wall_mount"  # the fixed joint that holds a wall unit's carcass to the world
NOMINAL_MASS = 1.0  # what a static model's link says it weighs: Gazebo ignores it, PyBullet wants one
GAZEBO_SYSTEMS = (("gz-sim-physics-system", "gz::sim::systems::Physics"),
                  ("gz-sim-user-commands-system", "gz::sim::systems::UserCommands"),
                  ("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster"),
                  ("gz-sim-sensors-system", "gz::sim::systems::Sensors"))
COLOURS = {"wall": (0.85, 0.83, 0.78), "floor": (0.6, 0.55, 0.5), "furniture": (0.55, 0.4, 0.25),
           "appliance": (0.9, 0.9, 0.92), "handle": (0.2, 0.2, 0.2), "item": (0.8, 0.3, 0.2)}
APPLIANCES = ("fridge", "freezer", "oven", "microwave", "washing_machine", "stove_burner", "sink", "bathtub",
              "toilet", "coffee_machine", "toaster", "television")


@dataclass(frozen=True)
class ModelKind:
    """How a scene object becomes a model: static furniture, an articulated container, or a thing."""

    kind: str  # "static", "door", "drawer", "item"


def model_kind(obj: SceneObject) -> ModelKind:
    container = obj.has("openable") and obj.has("receptacle")
    if obj.has("pickupable"):
        return ModelKind("item")
    if container:
        return ModelKind("drawer" if obj.category in SLIDING else "door")
    return ModelKind("static")


def _f(*values: float) -> str:
    return " ".join(f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) > 5e-5 else "0" for v in values)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def _box_shape(parent: ET.Element, kind: str, name: str, size: tuple[float, float, float],
               pose: tuple[float, float, float], colour: tuple[float, float, float] | None = None) -> None:
    element = _sub(parent, kind, name=name)
    _sub(element, "pose", _f(*pose, 0, 0, 0))
    _sub(_sub(_sub(element, "geometry"), "box"), "size", _f(*size))
    if colour is not None:
        material = _sub(element, "material")
        for tag in ("ambient", "diffuse"):
            _sub(material, tag, _f(*colour, 1.0))


def _box_part(link: ET.Element, name: str, size: tuple[float, float, float], pose: tuple[float, float, float],
              colour: tuple[float, float, float], friction: float | None = None) -> None:
    _box_shape(link, "collision", name, size, pose)
    if friction is not None:  # Gazebo reads it here; world/pybullet_world.load_world gives PyBullet the same
        ode = _sub(_sub(_sub(link.findall("collision")[-1], "surface"), "friction"), "ode")
        _sub(ode, "mu", _f(friction))
        _sub(ode, "mu2", _f(friction))
    _box_shape(link, "visual", name, size, pose, colour)


def _inertial(link: ET.Element, mass: float, size: tuple[float, float, float],
              centre: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
    """A solid box's inertia about its centre (a valid inertia for any positive size)."""
    x, y, z = (max(s, 1e-3) for s in size)
    inertial = _sub(link, "inertial")
    _sub(inertial, "pose", _f(*centre, 0, 0, 0))
    _sub(inertial, "mass", _f(mass))
    inertia = _sub(inertial, "inertia")
    for tag, value in (("ixx", mass * (y * y + z * z) / 12), ("iyy", mass * (x * x + z * z) / 12),
                       ("izz", mass * (x * x + y * y) / 12), ("ixy", 0.0), ("ixz", 0.0), ("iyz", 0.0)):
        _sub(inertia, tag, f"{value:.6g}")


def _model(world: ET.Element, name: str, pose: tuple[float, ...], static: bool) -> ET.Element:
    model = _sub(world, "model", name=name)
    _sub(model, "static", "true" if static else "false")
    _sub(model, "pose", _f(*pose))
    return model


def _colour_of(obj: SceneObject) -> tuple[float, float, float]:
    if obj.has("pickupable"):
        return COLOURS["item"]
    return COLOURS["appliance"] if obj.category in APPLIANCES else COLOURS["furniture"]


def front_yaw(box: Box, scene: Scene, obj: SceneObject) -> float:
    """The yaw that turns a container's model +x toward the side it opens to: where its box says (a
    unit under a worktop: the worktop's front), else its scene's or the room's middle."""
    fx, fy = box.faces or front_of(obj, box.center[0], box.center[1], scene, box.size)
    return math.atan2(fy, fx)


def _local_size(box: Box, yaw: float) -> tuple[float, float, float]:
    """The box's (depth along the model's x, width along its y, height) for a yaw that is a multiple
    of a quarter turn."""
    along_x = abs(math.cos(yaw)) > 0.5
    return (box.size[0], box.size[1], box.size[2]) if along_x else (box.size[1], box.size[0], box.size[2])


def _container(world: ET.Element, obj: SceneObject, box: Box, scene: Scene, sliding: bool) -> None:
    yaw = front_yaw(box, scene, obj)
    d, w, h = _local_size(box, yaw)
    p = PANEL
    model = _model(world, obj.id, (*box.center, 0.0, 0.0, yaw), static=False)
    colour = _colour_of(obj)
    carcass = _sub(model, "link", name="carcass")
    _inertial(carcass, max(5.0, 60.0 * d * w * h), (d, w, h))
    _box_part(carcass, "back", (p, w, h), (-d / 2 + p / 2, 0, 0), colour)
    # the sides stand on the floor where no bottom panel carries them (a chest of drawers): a carcass
    # standing on its back alone tipped forward onto its drawer's front and pinned it to the floor
    side_h, side_z = (h - p, -p / 2) if sliding else (h - 2 * p, 0.0)
    for side, y in (("left", w / 2 - p / 2), ("right", -w / 2 + p / 2)):
        _box_part(carcass, side, (d - 2 * p, p, side_h), (0, y, side_z), colour)
    _box_part(carcass, "top", (d - p, w, p), (-p / 2, 0, h / 2 - p / 2), colour)
    if not sliding:
        _box_part(carcass, "bottom", (d - p, w, p), (-p / 2, 0, -h / 2 + p / 2), colour)
    if not sliding and has_shelf((d, w, h)):  # what is in it stands there (house_geometry.inner_floor)
        _box_part(carcass, "shelf", (d - 2 * p, w - 2 * p, p), (-p / 2, 0, -h / 2 + SHELF_TOP - p / 2), colour)
    front = _sub(model, "link", name="drawer" if sliding else "door")
    if sliding:
        # a chest of drawers: the top drawer slides out (what is in the chest lies on its floor,
        # house_geometry.inner_floor); the shut drawers below it are one fixed front, under a
        # divider the top drawer runs on
        dh = top_drawer_height((d, w, h))
        below = h - dh
        if below > p:
            _box_part(carcass, "lower_fronts", (p, w, below - 0.002), (d / 2 - p / 2, 0, -h / 2 + below / 2 - 0.001),
                      colour)
            _box_part(carcass, "divider", (d - 2 * p, w - 2 * p, p), (-p / 2, 0, -h / 2 + below - p / 2), colour)
        _sub(front, "pose", _f(d / 2 - p / 2, 0, h / 2 - dh / 2, 0, 0, 0))
        _inertial(front, 1.0 + 4.0 * w * d, (p, w, dh))
        _box_part(front, "front", (p, w - 0.004, dh - 0.004), (0, 0, 0), colour)
        _box_part(front, "floor", (d - 2 * p, w - 2 * p - 0.004, p - 0.005), (-d / 2 + p, 0, -dh / 2 + (p + 0.005) / 2),
                  colour)
        _box_part(front, "handle", (HANDLE_PROUD, min(0.3, 0.4 * w), 0.02), (p / 2 + HANDLE_PROUD / 2, 0, 0),
                  COLOURS["handle"])
        joint = _sub(model, "joint", name=f"{obj.id}_slide", type="prismatic")
        lower, upper = 0.0, 0.8 * (d - p)
    else:
        # the door hangs on a vertical hinge at one edge of the front: the left one as seen from the
        # room in front of it (the model's -y), unless the scene says right; it swings out into the room.
        # The axis runs along the front's outer face, as real hinges carry a door: an axis through the
        # middle of the panel swings its outer edge sideways by half the panel, into a worktop or a
        # wall beside the unit (test_world_export sweeps every door)
        hinge_sign = 1.0 if obj.hinge == "right" else -1.0
        _sub(front, "pose", _f(d / 2, hinge_sign * w / 2, 0, 0, 0, 0))
        _inertial(front, 1.0 + 5.0 * w * h, (p, w, h), (-p / 2, -hinge_sign * w / 2, 0))
        _box_part(front, "panel", (p, w - 0.004, h - 0.004), (-p / 2, -hinge_sign * w / 2, 0), colour)
        _box_part(front, "handle", (HANDLE_PROUD, 0.02, min(0.3, 0.4 * h)),
                  (HANDLE_PROUD / 2, -hinge_sign * (w - 0.06), 0), COLOURS["handle"])
        joint = _sub(model, "joint", name=f"{obj.id}_hinge", type="revolute")
        lower, upper = (0.0, DOOR_OPENS) if hinge_sign > 0 else (-DOOR_OPENS, 0.0)
    _sub(joint, "parent", "carcass")
    _sub(joint, "child", front.get("name"))
    if box.hung:  # a wall unit is fixed to the wall, as it is screwed to it (world/pybullet_world.wall_mounted)
        mount = _sub(model, "joint", name=WALL_MOUNT, type="fixed")
        _sub(mount, "parent", "world")
        _sub(mount, "child", "carcass")
    axis = _sub(joint, "axis")
    _sub(axis, "xyz", "1 0 0" if sliding else "0 0 1")
    limit = _sub(axis, "limit")
    _sub(limit, "lower", _f(lower))
    _sub(limit, "upper", _f(upper))
    _sub(limit, "effort", "100")
    _sub(limit, "velocity", "1")
    dynamics = _sub(axis, "dynamics")
    _sub(dynamics, "damping", "2")
    _sub(dynamics, "friction", "0.5")


def _item(world: ET.Element, obj: SceneObject, box: Box) -> None:
    model = _model(world, obj.id, (*box.center, 0.0, 0.0, 0.0), static=False)
    link = _sub(model, "link", name="link")
    mass = MASSES.get(obj.category, ITEM_MASS)
    _inertial(link, mass, box.size)
    sx, sy, sz = box.size
    if box.container:  # a box that opens: hollow, so that what is in it lies inside
        p = min(PANEL, sx / 4, sy / 4) / 2
        _box_part(link, "floor", (sx, sy, p), (0, 0, -sz / 2 + p / 2), COLOURS["item"])
        for name, size, pose in (("wall_px", (p, sy, sz), (sx / 2 - p / 2, 0, 0)),
                                 ("wall_nx", (p, sy, sz), (-sx / 2 + p / 2, 0, 0)),
                                 ("wall_py", (sx - 2 * p, p, sz), (0, sy / 2 - p / 2, 0)),
                                 ("wall_ny", (sx - 2 * p, p, sz), (0, -sy / 2 + p / 2, 0))):
            _box_part(link, name, size, pose, COLOURS["item"], ITEM_FRICTION)
    else:
        _box_part(link, "body", box.size, (0, 0, 0), _colour_of(obj), ITEM_FRICTION)


def _static(world: ET.Element, obj: SceneObject, box: Box) -> None:
    model = _model(world, obj.id, (*box.center, 0.0, 0.0, 0.0), static=True)
    link = _sub(model, "link", name="link")
    _inertial(link, NOMINAL_MASS, box.size)  # unused by a static model; PyBullet asks for one
    parts = solid_parts(box)  # a worktop with a unit under it: its top, and the rest around the unit
    for k, (centre, size) in enumerate(parts):
        offset = (centre[0] - box.center[0], centre[1] - box.center[1], centre[2] - box.center[2])
        _box_part(link, "body" if len(parts) == 1 else f"body_{k}", size, offset, _colour_of(obj))


def _environment(world: ET.Element, scene: Scene, plan: FloorPlan) -> None:
    physics = _sub(world, "physics", name="1ms", type="ode")
    _sub(physics, "max_step_size", "0.001")
    _sub(physics, "real_time_factor", "1.0")
    for filename, name in GAZEBO_SYSTEMS:
        plugin = _sub(world, "plugin", filename=filename, name=name)
        if name.endswith("Sensors"):
            _sub(plugin, "render_engine", "ogre2")
    _sub(world, "gravity", "0 0 -9.8")
    sun = _sub(world, "light", type="directional", name="sun")
    _sub(sun, "cast_shadows", "true")
    _sub(sun, "pose", "0 0 10 0 0 0")
    _sub(sun, "diffuse", "0.8 0.8 0.8 1")
    _sub(sun, "specular", "0.2 0.2 0.2 1")
    _sub(sun, "direction", "-0.5 0.1 -0.9")
    for room in sorted(scene.rooms.values(), key=lambda r: r.id):
        light = _sub(world, "light", type="point", name=f"{room.id}_light")
        _sub(light, "pose", _f(room.centre[0], room.centre[1], 2.0, 0, 0, 0))
        _sub(light, "diffuse", "0.5 0.5 0.5 1")
        attenuation = _sub(light, "attenuation")
        _sub(attenuation, "range", "8")
        _sub(attenuation, "linear", "0.2")
        _sub(attenuation, "constant", "0.5")
        _sub(attenuation, "quadratic", "0.01")
    ground = _model(world, "ground_plane", (0, 0, 0, 0, 0, 0), static=True)
    link = _sub(ground, "link", name="link")
    _inertial(link, NOMINAL_MASS, (1.0, 1.0, 1.0))
    xs = [v for r in scene.rooms.values() for v in (r.bounds[0], r.bounds[2])]
    ys = [v for r in scene.rooms.values() for v in (r.bounds[1], r.bounds[3])]
    for kind in ("collision", "visual"):
        element = _sub(link, kind, name="floor")
        plane = _sub(_sub(element, "geometry"), "plane")
        _sub(plane, "normal", "0 0 1")
        _sub(plane, "size", _f(max(xs) - min(xs) + 20, max(ys) - min(ys) + 20))
        if kind == "visual":
            material = _sub(element, "material")
            for tag in ("ambient", "diffuse"):
                _sub(material, tag, _f(*COLOURS["floor"], 1.0))
    walls = _model(world, "walls", (0, 0, 0, 0, 0, 0), static=True)
    link = _sub(walls, "link", name="link")
    _inertial(link, NOMINAL_MASS, (1.0, 1.0, 1.0))
    for k, wall in enumerate(plan.walls):
        _box_part(link, f"wall_{k}", wall.size, wall.centre, COLOURS["wall"])


def world_sdf(home: House) -> str:
    """The SDFormat text of the house's world (`<sdf version="1.9">` with one `<world>`)."""
    scene, boxes, plan = home.scene, home.boxes, home.plan
    root = ET.Element("sdf", version=SDF_VERSION)
    world = _sub(root, "world", name=scene.name)
    _environment(world, scene, plan)
    for oid in sorted(scene.objects):
        obj, box = scene.objects[oid], boxes[oid]
        kind = model_kind(obj).kind
        if kind == "item":
            _item(world, obj, box)
        elif kind in ("door", "drawer"):
            _container(world, obj, box, scene, sliding=kind == "drawer")
        else:
            _static(world, obj, box)
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
