"""An exported world in PyBullet: `loadSDF`, then what PyBullet's SDF reader leaves out and the
file says: a model marked `<static>` stands still (zero mass), as Gazebo keeps it."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def static_models(sdf: Path) -> set[str]:
    root = ET.parse(sdf).getroot()
    return {m.get("name", "") for m in root.iter("model") if (m.findtext("static") or "").strip() == "true"}


def load_world(p: Any, sdf: Path, client: int) -> dict[str, int]:
    """Load the world into a connected PyBullet client; its bodies by model name."""
    bodies = p.loadSDF(str(sdf), physicsClientId=client)
    names = {p.getBodyInfo(b, physicsClientId=client)[1].decode(): b for b in bodies}
    for name in static_models(sdf):
        if name in names:
            p.changeDynamics(names[name], -1, mass=0.0, physicsClientId=client)
    return names
