"""An exported world in PyBullet: `loadSDF`, then what PyBullet's SDF reader leaves out and the
file says: a model marked `<static>` stands still (zero mass), as Gazebo keeps it; a wall unit held to
the world by a fixed joint (which PyBullet's reader refuses: "Cannot load SDF file") is loaded
without it and stands as still; things' friction; joints that turn against their own friction only."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def quiet_native_output() -> Iterator[None]:
    """Silence what PyBullet's C++ importers print while a file loads (a warning for every link that
    is a bare frame: base_footprint, camera_optical_frame, ...); Python's own output is untouched."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real stdout (captured): nothing to silence
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), fd)
        try:
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)


def static_models(sdf: Path) -> set[str]:
    root = ET.parse(sdf).getroot()
    return {m.get("name", "") for m in root.iter("model") if (m.findtext("static") or "").strip() == "true"}


def wall_mounted(root: ET.Element) -> set[str]:
    """Models held to the world by a joint whose parent is `world` (a wall unit), in place: each
    such joint is taken out of the tree."""
    mounted: set[str] = set()
    for model in root.iter("model"):
        for joint in model.findall("joint"):
            if (joint.findtext("parent") or "").strip() == "world":
                model.remove(joint)
                mounted.add(model.get("name", ""))
    return mounted


def load_world(p: Any, sdf: Path, client: int) -> dict[str, int]:
    """Load the world into a connected PyBullet client; its bodies by model name."""
    tree = ET.parse(sdf)
    mounted = wall_mounted(tree.getroot())
    with tempfile.TemporaryDirectory(prefix="conceptagent_sdf_") as scratch, quiet_native_output():
        readable = sdf
        if mounted:  # the same file less its world joints, beside nothing else it names (no meshes)
            readable = Path(scratch) / sdf.name
            tree.write(readable, encoding="utf-8", xml_declaration=True)
        bodies = p.loadSDF(str(readable), physicsClientId=client)
    names = {p.getBodyInfo(b, physicsClientId=client)[1].decode(): b for b in bodies}
    for name in sorted(static_models(sdf) | mounted):  # in one order: PyBullet re-adds each body it makes static, and
        # the order of its bodies is the order contacts are solved in (results then repeat across runs)
        if name in names:
            p.changeDynamics(names[name], -1, mass=0.0, physicsClientId=client)
    for name, mu in sorted(model_friction(sdf).items()):  # PyBullet's SDF reader leaves <surface> out
        if name in names:
            p.changeDynamics(names[name], -1, lateralFriction=mu, physicsClientId=client)
    for body in names.values():
        free_joints(p, body, client)
    return names


def free_joints(p: Any, body: int, client: int) -> None:
    """A door's hinge and a drawer's slide turn as the file says, against their <friction> alone:
    PyBullet puts a velocity motor holding still on every joint it loads, strong enough that a
    60 N pull on a drawer's handle dragged the whole cabinet across the floor instead."""
    for j in range(p.getNumJoints(body, physicsClientId=client)):
        info = p.getJointInfo(body, j, physicsClientId=client)
        if info[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC):
            p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, targetVelocity=0.0, force=float(info[7]),
                                    physicsClientId=client)


def model_friction(sdf: Path) -> dict[str, float]:
    """Each model's friction coefficient (its first collision's <surface><friction><ode><mu>), where given."""
    out: dict[str, float] = {}
    for model in ET.parse(sdf).getroot().iter("model"):
        mu = model.findtext("link/collision/surface/friction/ode/mu")
        if mu is not None:
            out[model.get("name", "")] = float(mu)
    return out
