"""The ROS interface files parse as ROS 2 message definitions (rosbags' parser, no ROS needed),
and the ROS layer stays the only place that imports rclpy."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
rosbags = pytest.importorskip("rosbags.typesys")


def sections(path: Path) -> list[str]:
    return [s.strip() for s in re.split(r"^---\s*$", path.read_text(), flags=re.M)]


@pytest.mark.parametrize("path", sorted([*ROOT.glob("msg/*.msg"), *ROOT.glob("srv/*.srv"), *ROOT.glob("action/*.action")]),
                         ids=lambda p: p.name)
def test_interface_parses(path):
    from rosbags.typesys import get_types_from_msg

    expected = {".msg": 1, ".srv": 2, ".action": 3}[path.suffix]
    parts = sections(path)
    assert len(parts) == expected
    for i, text in enumerate(parts):
        text = text.replace("SkillCall call", "conceptagent_ros/msg/SkillCall call")
        text = text.replace("PlanStep last_step", "conceptagent_ros/msg/PlanStep last_step")
        types = get_types_from_msg(text, f"conceptagent_ros/msg/{path.stem}Part{i}")
        assert types


def test_core_never_imports_rclpy():
    for path in (ROOT / "conceptagent_ros").rglob("*.py"):
        if "ros" in path.relative_to(ROOT / "conceptagent_ros").parts[:1]:
            continue
        assert "rclpy" not in path.read_text(), path


def test_package_manifest_and_cmake_agree():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    for path in [*ROOT.glob("msg/*.msg"), *ROOT.glob("srv/*.srv"), *ROOT.glob("action/*.action")]:
        assert f'"{path.parent.name}/{path.name}"' in cmake
    assert "<name>conceptagent_ros</name>" in (ROOT / "package.xml").read_text()
    assert (ROOT / "conceptagent_ros" / "__init__.py").read_text().strip() == ""
