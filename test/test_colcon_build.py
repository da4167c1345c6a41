"""`colcon build` of the package in a workspace, as a ROS user does it: the tracked files copied to
src/conceptagent_ros (no virtual environment inside), built against the ROS 2 wheels, and the
install checked: executables, launch, config and rviz files, and the Python package holding both
our sources and rosidl's generated modules."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ros_helpers import require_ros

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_colcon_build_installs_a_complete_package(tmp_path):
    require_ros()
    colcon = shutil.which("colcon", path=str(Path(sys.executable).parent)) or shutil.which("colcon")
    if colcon is None:
        if os.environ.get("CONCEPTAGENT_REQUIRE_ROS"):
            pytest.fail("colcon is not installed (pip install -e '.[ros]')")
        pytest.skip("colcon is not installed")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if files.returncode != 0:
        pytest.skip("not a git checkout")
    source = tmp_path / "src" / "conceptagent_ros"
    for name in files.stdout.splitlines():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():
            target.symlink_to(os.readlink(ROOT / name))
        elif (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    prefix = str(Path(sys.prefix))
    env = dict(os.environ, AMENT_PREFIX_PATH=prefix, CMAKE_PREFIX_PATH=prefix)
    build = subprocess.run([colcon, "build", "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}",
                            "-DBUILD_TESTING=OFF"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    install = tmp_path / "install" / "conceptagent_ros"
    for executable in ("planner_node", "robot_standin_node", "robot_skills_node", "speech_node", "voxposer_node",
                       "perception_node", "scene_graph_node"):
        path = install / "lib" / "conceptagent_ros" / executable
        assert path.is_file() and os.access(path, os.X_OK), executable
    share = install / "share" / "conceptagent_ros"
    for name in ("launch/conceptagent.launch.py", "launch/embedded.launch.py", "rviz/conceptagent.rviz",
                 "config/skills.yaml", "config/ros/robot.yaml", "config/ros/embedded.yaml", "package.xml",
                 "data/eai_virtualhome/pddl/virtualhome.pddl", "worlds/apartment.sdf", "worlds/apartment_map.yaml",
                 "worlds/apartment_map.pgm", "description/conceptagent_mm.urdf.xacro"):
        assert (share / name).is_file(), name
    package = install / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "conceptagent_ros"
    for name in ("cli/main.py", "ros/planner_node.py", "planning/agent.py", "msg/__init__.py", "action/__init__.py",
                 "srv/__init__.py"):
        assert (package / name).is_file(), name
    assert (package / "__init__.py").read_text().strip() == ""
    assert list(package.glob("conceptagent_ros_s__rosidl_typesupport_c*.so"))
