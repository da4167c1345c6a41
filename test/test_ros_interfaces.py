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
        for own in ("SkillCall", "PlanStep", "SceneObject", "SceneRelation", "Room", "RobotState", "SceneGraph",
                    "ObjectAlias"):
            text = re.sub(rf"^{own}(\[\])? ", rf"conceptagent_ros/msg/{own}\1 ", text, flags=re.M)
        types = get_types_from_msg(text, f"conceptagent_ros/msg/{path.stem}Part{i}")
        assert types


GENERATED = {"msg", "srv", "action"}  # rosidl output (git-ignored on the pip path)


def test_core_never_imports_rclpy_or_messages():
    for path in (ROOT / "conceptagent_ros").rglob("*.py"):
        top = path.relative_to(ROOT / "conceptagent_ros").parts[0]
        if top == "ros" or top in GENERATED:
            continue
        text = path.read_text()
        assert "rclpy" not in text, path
        assert not re.search(r"^\s*(from|import) (std_msgs|geometry_msgs|sensor_msgs|visualization_msgs|nav_msgs|"
                             r"conceptagent_ros\.(msg|srv|action))\b", text, flags=re.M), path


def test_package_manifest_and_cmake_agree():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    for path in [*ROOT.glob("msg/*.msg"), *ROOT.glob("srv/*.srv"), *ROOT.glob("action/*.action")]:
        assert f'"{path.parent.name}/{path.name}"' in cmake
    assert "<name>conceptagent_ros</name>" in (ROOT / "package.xml").read_text()
    assert (ROOT / "conceptagent_ros" / "__init__.py").read_text().strip() == ""
