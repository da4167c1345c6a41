"""Generated shapes for the grasp bench, in families of everyday things (`--objects shapes:dev`,
`shapes:heldout`, `shape:FAMILY:N`).

Each family draws its sizes from its own ranges, seeded by (family, N): the same spec is the same
shape on every machine. Development shapes are N = 0-9 of every family (what the grasp planner
may be tuned on); held-out shapes are N = 100-109 (what it is judged on). A shape is one rigid link,
its collision and visual geometry a URDF primitive, lying as such a thing lies on a table: a can or
a marker on its side, a phone or a book flat, a coaster on its face. Its mass follows from its
volume at DENSITY (wood, plastic).
"""
from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conceptagent_ros.atomic_files import write_atomic

DENSITY = 600.0  # kg/m3
MIN_MASS = 0.02  # kg
DEV_INDICES = range(0, 10)
HELDOUT_INDICES = range(100, 110)

# family -> (primitive, lying on its side, ranges in metres). box: (x, y, z); cylinder and capsule:
# (radius, length); sphere: (radius,). Every family has one extent the Panda's 8 cm hand closes across.
FAMILIES: dict[str, tuple[str, bool, tuple[tuple[float, float], ...]]] = {
    "box": ("box", False, ((0.03, 0.06), (0.04, 0.07), (0.03, 0.07))),
    "cube": ("box", False, ((0.025, 0.055),)),
    "tall_box": ("box", False, ((0.03, 0.05), (0.03, 0.05), (0.08, 0.14))),
    "cylinder_upright": ("cylinder", False, ((0.015, 0.032), (0.05, 0.13))),
    "cylinder_side": ("cylinder", True, ((0.012, 0.03), (0.07, 0.16))),
    "sphere": ("sphere", False, ((0.02, 0.035),)),
    "plate": ("box", False, ((0.04, 0.07), (0.08, 0.15), (0.008, 0.02))),  # a phone, a book lying flat
    "disc": ("cylinder", False, ((0.025, 0.035), (0.008, 0.02))),  # a coaster, a jar's lid
    "bar": ("box", False, ((0.015, 0.03), (0.10, 0.18), (0.015, 0.03))),  # a marker, a remote
    "capsule_side": ("capsule", True, ((0.01, 0.025), (0.05, 0.11))),  # a pill bottle, a glue stick
}


@dataclass(frozen=True)
class Shape:
    family: str
    index: int
    primitive: str  # box | cylinder | sphere | capsule
    size: tuple[float, ...]  # box: x, y, z; cylinder, capsule: radius, length; sphere: radius
    on_side: bool  # a cylinder or capsule lying with its axis level

    @property
    def name(self) -> str:
        return f"shape:{self.family}:{self.index}"

    @property
    def volume(self) -> float:
        if self.primitive == "box":
            return float(np.prod(self.size))
        if self.primitive == "sphere":
            return 4.0 / 3.0 * math.pi * self.size[0] ** 3
        radius, length = self.size
        cap = 4.0 / 3.0 * math.pi * radius ** 3 if self.primitive == "capsule" else 0.0
        return math.pi * radius ** 2 * length + cap

    @property
    def mass(self) -> float:
        return max(MIN_MASS, DENSITY * self.volume)

    @property
    def extent(self) -> tuple[float, float, float]:
        """Its box as it lies (x, y, z), in metres."""
        if self.primitive == "box":
            return self.size[0], self.size[1], self.size[2]
        if self.primitive == "sphere":
            return (2 * self.size[0],) * 3
        radius, length = self.size
        tall = length + (2 * radius if self.primitive == "capsule" else 0.0)
        return (2 * radius, tall, 2 * radius) if self.on_side else (2 * radius, 2 * radius, tall)


def shape(family: str, index: int) -> Shape:
    """The shape of `family` number `index` (the same on every call)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown shape family {family!r}: one of {', '.join(FAMILIES)}")
    if index < 0:
        raise ValueError(f"a shape's number is 0 or more, not {index}")
    primitive, on_side, ranges = FAMILIES[family]
    rng = np.random.default_rng([list(FAMILIES).index(family), index, 40])
    size = tuple(round(float(rng.uniform(lo, hi)), 4) for lo, hi in ranges)
    if family == "cube":
        size = size * 3
    return Shape(family, index, primitive, size, on_side)


def shape_set(which: str) -> list[Shape]:
    """`dev` (numbers 0-9 of each family) or `heldout` (100-109)."""
    indices = {"dev": DEV_INDICES, "heldout": HELDOUT_INDICES}.get(which)
    if indices is None:
        raise ValueError(f"shape sets are dev and heldout, not {which!r}")
    return [shape(family, i) for family in FAMILIES for i in indices]


def parse_shape(spec: str) -> Shape:
    """`shape:FAMILY:N`."""
    parts = spec.split(":")
    if len(parts) != 3 or parts[0] != "shape" or not parts[2].isdigit():
        raise ValueError(f"a shape is shape:FAMILY:N, not {spec!r}")
    return shape(parts[1], int(parts[2]))


def shape_urdf(s: Shape) -> str:
    """One link with the shape's collision and visual geometry (lying on its side: turned a quarter
    about x), its inertia that of a solid box round it."""
    if s.primitive == "box":
        geometry = f'<box size="{s.size[0]} {s.size[1]} {s.size[2]}"/>'
    elif s.primitive == "sphere":
        geometry = f'<sphere radius="{s.size[0]}"/>'
    else:
        geometry = f'<{s.primitive} radius="{s.size[0]}" length="{s.size[1]}"/>'
    extent = s.extent
    rpy = f"{math.pi / 2} 0 0" if s.on_side else "0 0 0"
    m = s.mass
    ixx, iyy, izz = (m / 12 * (extent[1] ** 2 + extent[2] ** 2), m / 12 * (extent[0] ** 2 + extent[2] ** 2),
                     m / 12 * (extent[0] ** 2 + extent[1] ** 2))
    return f"""<?xml version="1.0"?>
<robot name="{s.family}_{s.index}">
  <link name="base_link">
    <inertial><origin xyz="0 0 0"/><mass value="{m:.4f}"/>
      <inertia ixx="{ixx:.3e}" ixy="0" ixz="0" iyy="{iyy:.3e}" iyz="0" izz="{izz:.3e}"/></inertial>
    <visual><origin xyz="0 0 0" rpy="{rpy}"/><geometry>{geometry}</geometry>
      <material name="shape"><color rgba="0.85 0.45 0.2 1"/></material></visual>
    <collision><origin xyz="0 0 0" rpy="{rpy}"/><geometry>{geometry}</geometry></collision>
  </link>
</robot>
"""


_WRITTEN = Path(tempfile.gettempdir()) / "conceptagent_shapes"


def shape_urdf_file(s: Shape) -> str:
    """The shape's URDF written to a file (once per machine): its path, for loadURDF."""
    _WRITTEN.mkdir(parents=True, exist_ok=True)
    path = _WRITTEN / f"{s.family}_{s.index}.urdf"
    text = shape_urdf(s)
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text)  # benches running side by side may write the same shape
    return str(path)
