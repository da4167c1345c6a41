"""Checks for the kinds of defect a first bring-up on Jazzy + Harmonic would meet, each run on what
ships and shown to fail on the defect it guards against (the description, package.xml or config as
they were before the fix):

- the range sensors, ray-cast in PyBullet over their full angle and range from their mounted frame,
  with the torso and the camera's head at their limits, hit no link of the robot;
- every mimic joint is listed in the ros2_control block (ros2_control builds mimic joints only from
  the joints listed there, and gz_ros2_control drives only those);
- every controller type in controllers.yaml is exported by a package of ros2_controllers (Jazzy),
  and package.xml names that package;
- every third-party module that launch-time code imports is declared in package.xml (a rosdep key)
  and in setup.py;
- the spawn pose and the arm's initial joint values leave the robot clear of every world.

Written against the files themselves (URDF, XML, YAML): none of this reuses the code it checks."""
from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GAZEBO = ROOT / "config" / "gazebo"
RANGE_SENSORS = ("gpu_lidar", "lidar", "gpu_ray", "ray")

# ros2_controllers (jazzy branch): controller type -> the package whose ros_control_plugins.xml (or
# <name>_plugin(s).xml) exports it
CONTROLLER_PACKAGES = {
    "joint_state_broadcaster/JointStateBroadcaster": "joint_state_broadcaster",
    "joint_trajectory_controller/JointTrajectoryController": "joint_trajectory_controller",
    "position_controllers/JointGroupPositionController": "position_controllers",
    "velocity_controllers/JointGroupVelocityController": "velocity_controllers",
    "effort_controllers/JointGroupEffortController": "effort_controllers",
    "forward_command_controller/ForwardCommandController": "forward_command_controller",
    "forward_command_controller/MultiInterfaceForwardCommandController": "forward_command_controller",
    "position_controllers/GripperActionController": "gripper_controllers",
    "effort_controllers/GripperActionController": "gripper_controllers",
    "parallel_gripper_action_controller/GripperActionController": "parallel_gripper_controller",
    "diff_drive_controller/DiffDriveController": "diff_drive_controller",
    "imu_sensor_broadcaster/IMUSensorBroadcaster": "imu_sensor_broadcaster",
    "force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster": "force_torque_sensor_broadcaster",
    "range_sensor_broadcaster/RangeSensorBroadcaster": "range_sensor_broadcaster",
    "pid_controller/PidController": "pid_controller",
    "admittance_controller/AdmittanceController": "admittance_controller",
    "tricycle_controller/TricycleController": "tricycle_controller",
}
# module imported at launch -> (rosdep key in package.xml, name on PyPI in setup.py)
THIRD_PARTY = {"yaml": ("python3-yaml", "PyYAML"), "numpy": ("python3-numpy", "numpy"),
               "scipy": ("python3-scipy", "scipy"), "pydantic": ("python3-pydantic", "pydantic"),
               "xacro": ("xacro", "xacro"), "PIL": ("python3-pil", "Pillow"),
               "skimage": ("python3-skimage", "scikit-image"), "sklearn": ("python3-sklearn", "scikit-learn"),
               "matplotlib": ("python3-matplotlib", "matplotlib")}


def _expand() -> ET.Element:
    """The description as the Gazebo launch expands it: sensors, plugins and the ros2_control block."""
    from xacro import process_file

    mappings = {"controllers_file": str(GAZEBO / "controllers.yaml"), "gazebo": "true"}
    return ET.fromstring(process_file(str(ROOT / "description" / "conceptagent_mm.urdf.xacro"),
                                      mappings=mappings).toxml())


@pytest.fixture(scope="module")
def description() -> ET.Element:
    return _expand()


def _package_depends(text: str | None = None) -> set[str]:
    package = ET.fromstring(text if text is not None else (ROOT / "package.xml").read_text())
    return {e.text for e in package if e.tag in ("depend", "exec_depend")}


# -- range sensors -------------------------------------------------------------------------------------
def _range_sensors(urdf: ET.Element) -> list[tuple[str, dict]]:
    sensors = []
    for reference in urdf.iter("gazebo"):
        for sensor in reference.iter("sensor"):
            if sensor.get("type") in RANGE_SENSORS:
                lidar = sensor.find("lidar") or sensor.find("ray")
                horizontal, reach = lidar.find("scan/horizontal"), lidar.find("range")
                sensors.append((reference.get("reference"), {
                    "samples": int(horizontal.findtext("samples")), "min_angle": float(horizontal.findtext("min_angle")),
                    "max_angle": float(horizontal.findtext("max_angle")), "min": float(reach.findtext("min")),
                    "max": float(reach.findtext("max"))}))
    return sensors


def self_hits(urdf: ET.Element, tmp_path: Path) -> list[str]:
    """Every ray of every range sensor that hits the robot itself, for each limit of the torso and
    the head, with the arm at its initial joint values: "sensor angle -> link (torso, tilt)"."""
    import pybullet as p

    path = tmp_path / "robot.urdf"
    path.write_text(ET.tostring(urdf, encoding="unicode"))
    initial = _initial_joint_values(urdf)
    client = p.connect(p.DIRECT)
    try:
        robot = p.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        joints = {p.getJointInfo(robot, j, physicsClientId=client)[1].decode(): j
                  for j in range(p.getNumJoints(robot, physicsClientId=client))}
        links = {p.getJointInfo(robot, j, physicsClientId=client)[12].decode(): j for j in joints.values()}
        names = {index: name for name, index in links.items()} | {-1: "base_link"}
        limits = {name: p.getJointInfo(robot, j, physicsClientId=client)[8:10] for name, j in joints.items()}
        hits = []
        for torso in limits["torso_lift_joint"]:
            for tilt in limits["camera_tilt_joint"]:
                for name, value in {**initial, "torso_lift_joint": torso, "camera_tilt_joint": tilt}.items():
                    p.resetJointState(robot, joints[name], value, physicsClientId=client)
                for frame, scan in _range_sensors(urdf):
                    position, orientation = p.getLinkState(robot, links[frame], computeForwardKinematics=True,
                                                           physicsClientId=client)[4:6]
                    rotation = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
                    angles = np.linspace(scan["min_angle"], scan["max_angle"], scan["samples"])
                    directions = (rotation @ np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)])).T
                    starts = np.asarray(position) + directions * scan["min"]
                    ends = np.asarray(position) + directions * scan["max"]
                    for angle, hit in zip(angles, p.rayTestBatch(starts.tolist(), ends.tolist(),
                                                                 physicsClientId=client), strict=True):
                        if hit[0] == robot:
                            hits.append(f"{frame} {math.degrees(angle):+.0f} deg -> {names[hit[1]]} "
                                        f"(torso {torso:.2f}, tilt {tilt:.2f})")
        return hits
    finally:
        p.disconnect(client)


def test_no_range_sensor_sees_the_robot_itself(description, tmp_path) -> None:
    assert _range_sensors(description), "the description has no range sensor to check"
    assert self_hits(description, tmp_path) == []


def test_the_range_check_reports_every_ray_the_full_circle_lidar_put_on_the_mast(description, tmp_path) -> None:
    as_it_was = ET.fromstring(ET.tostring(description))
    for horizontal in as_it_was.iter("horizontal"):  # the scan as it shipped: the full circle, 1 degree apart
        horizontal.find("samples").text, horizontal.find("min_angle").text = "360", str(-math.pi)
        horizontal.find("max_angle").text = str(math.pi)
    hits = self_hits(as_it_was, tmp_path)
    # about 28 rays (+-14 degrees behind) on the mast for each head tilt with the torso down; raised,
    # the mast's foot is above the scan plane
    assert len(hits) >= 2 * 20 and all("-> mast_link" in h and "torso 0.00" in h for h in hits), hits[:5]
    assert {h.split(" -> ")[0].split()[1] for h in hits} >= {"+180", "-175", "+175"}


# -- mimic joints ------------------------------------------------------------------------------------
def unlisted_mimic_joints(urdf: ET.Element) -> list[str]:
    listed = {j.get("name") for block in urdf.iter("ros2_control") for j in block.iter("joint")}
    return sorted(j.get("name") for j in urdf.iter("joint") if j.find("mimic") is not None and j.get("name") not in listed)


def test_every_mimic_joint_is_listed_in_ros2_control(description) -> None:
    assert any(j.find("mimic") is not None for j in description.iter("joint"))
    assert unlisted_mimic_joints(description) == []
    [finger] = [j for b in description.iter("ros2_control") for j in b.iter("joint") if j.get("name") == "right_finger_joint"]
    assert finger.find("command_interface") is None  # the mimic is followed, never commanded


def test_the_mimic_check_catches_a_mimic_joint_left_out(description) -> None:
    as_it_was = ET.fromstring(ET.tostring(description))
    for block in as_it_was.iter("ros2_control"):
        for joint in list(block):
            if joint.get("name") == "right_finger_joint":
                block.remove(joint)
    assert unlisted_mimic_joints(as_it_was) == ["right_finger_joint"]


# -- controllers and their packages ---------------------------------------------------------------------
def controller_problems(controllers: dict, depends: set[str]) -> list[str]:
    manager = controllers["controller_manager"]["ros__parameters"]
    problems = []
    for name, entry in manager.items():
        if isinstance(entry, dict) and "type" in entry:
            package = CONTROLLER_PACKAGES.get(entry["type"])
            if package is None:
                problems.append(f"{name}: {entry['type']} is exported by no ros2_controllers package in Jazzy")
            elif package not in depends:
                problems.append(f"{name}: {entry['type']} needs {package}, which package.xml does not name")
    return problems


def test_every_controller_type_comes_from_a_package_that_package_xml_names() -> None:
    controllers = yaml.safe_load((GAZEBO / "controllers.yaml").read_text())
    assert controller_problems(controllers, _package_depends()) == []


def test_the_controller_check_catches_the_gripper_package_left_out() -> None:
    controllers = yaml.safe_load((GAZEBO / "controllers.yaml").read_text())
    text = re.sub(r"\s*<exec_depend>parallel_gripper_controller</exec_depend>", "", (ROOT / "package.xml").read_text())
    assert [p.split(":")[0] for p in controller_problems(controllers, _package_depends(text))] == ["gripper_controller"]
    # the controller as it shipped: gripper_controllers' type, with no such package named
    controllers["controller_manager"]["ros__parameters"]["gripper_controller"]["type"] = \
        "position_controllers/GripperActionController"
    [problem] = controller_problems(controllers, _package_depends())
    assert "needs gripper_controllers" in problem
    typo = {"controller_manager": {"ros__parameters": {"arm": {"type": "joint_trajectory_controller/JTC"}}}}
    assert "no ros2_controllers package" in controller_problems(typo, _package_depends())[0]


# -- what launch-time code imports -------------------------------------------------------------------------
LAUNCH_IMPORTS = """
import builtins, importlib.util, sys
sys.path.insert(0, {test!r})
from test_launch_files import expand, stand_in_modules
sys.modules.update(stand_in_modules())
imported, real_import = set(), builtins.__import__
LAUNCHES = ("gazebo", "manipulation", "conceptagent", "embedded", "voxposer")

def recording(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {{}}).get("__name__", "")
    if level == 0 and (importer in LAUNCHES or importer.startswith("conceptagent_ros")):
        imported.add(name.split(".")[0])
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = recording  # every import statement of the launch files and the project's modules they load
for name in LAUNCHES:
    spec = importlib.util.spec_from_file_location(name, {launch!r} + "/" + name + ".launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expand(module.generate_launch_description())
builtins.__import__ = real_import
print(" ".join(sorted(imported)))
"""


def undeclared_launch_imports(imported: set[str], depends: set[str], requires: str) -> list[str]:
    problems = []
    for module in sorted(imported & set(THIRD_PARTY)):
        key, pypi = THIRD_PARTY[module]
        if key not in depends:
            problems.append(f"{module}: package.xml lacks <exec_depend>{key}</exec_depend>")
        if not re.search(rf'"{re.escape(pypi)}\b', requires):
            problems.append(f"{module}: setup.py's install_requires lacks {pypi}")
    return problems


def test_every_third_party_module_imported_at_launch_is_declared() -> None:
    done = subprocess.run([sys.executable, "-c", LAUNCH_IMPORTS.format(test=str(ROOT / "test"),
                                                                       launch=str(ROOT / "launch"))],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(done.stdout.split())
    unknown = {m for m in imported if m not in THIRD_PARTY and m not in sys.stdlib_module_names
               and not m.startswith("_") and m not in ("conceptagent_ros", "test_launch_files")}
    setup = (ROOT / "setup.py").read_text()
    requires = setup[setup.index("install_requires"):setup.index("extras_require")]
    assert {"pydantic", "yaml", "scipy"} <= imported  # the scene loader and the spawn are imported at launch
    assert undeclared_launch_imports(imported, _package_depends(), requires) == []
    # a module the table does not know is one nobody has checked: add it to THIRD_PARTY
    assert not {m for m in unknown if m not in {"rclpy", "ament_index_python", "launch", "launch_ros"}
                and not m.endswith("_msgs")}, unknown


def test_the_import_check_catches_pydantic_undeclared() -> None:
    text = re.sub(r"\s*<exec_depend>python3-pydantic</exec_depend>", "", (ROOT / "package.xml").read_text())
    assert undeclared_launch_imports({"pydantic"}, _package_depends(text), '"numpy>=1.24"') == [
        "pydantic: package.xml lacks <exec_depend>python3-pydantic</exec_depend>",
        "pydantic: setup.py's install_requires lacks pydantic"]


# -- the spawn ------------------------------------------------------------------------------------------
def _initial_joint_values(urdf: ET.Element) -> dict[str, float]:
    values = {}
    for block in urdf.iter("ros2_control"):
        for joint in block.iter("joint"):
            for param in joint.iter("param"):
                if param.get("name") == "initial_value":
                    values[joint.get("name")] = float(param.text)
    return values


def spawn_collisions(urdf: ET.Element, sdf: Path, start: tuple[float, float, float], tmp_path: Path) -> list[str]:
    """What the robot, spawned at `start` with its joints at their initial values, touches or comes
    within 2 cm of in the world `sdf` (the floor aside): "model (link)"."""
    import pybullet as p

    from conceptagent_ros.world.pybullet_world import load_world

    x, y, yaw = start
    path = tmp_path / "robot_spawn.urdf"
    path.write_text(ET.tostring(urdf, encoding="unicode"))
    client = p.connect(p.DIRECT)
    try:
        # the world as the project loads it into PyBullet (a wall unit's mount to the world, which
        # PyBullet's reader refuses, read apart); what is judged here is the spawn pose, not the loader
        world = load_world(p, sdf, client)
        robot = p.loadURDF(str(path), [x, y, 0.0], p.getQuaternionFromEuler([0, 0, yaw]), useFixedBase=True,
                           physicsClientId=client)
        joints = {p.getJointInfo(robot, j, physicsClientId=client)[1].decode(): j
                  for j in range(p.getNumJoints(robot, physicsClientId=client))}
        for name, value in _initial_joint_values(urdf).items():
            p.resetJointState(robot, joints[name], value, physicsClientId=client)
        touched = set()
        for name, body in world.items():
            if "floor" in name or "ground" in name:
                continue
            for contact in p.getClosestPoints(robot, body, 0.02, physicsClientId=client):
                link = "base_link" if contact[3] < 0 else p.getJointInfo(robot, contact[3], physicsClientId=client)[12].decode()
                touched.add(f"{name} ({link})")
        return sorted(touched)
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("scene", ["studio_kitchen", "apartment", "family_house"])
def test_the_robot_spawns_clear_of_the_world(description, scene, tmp_path) -> None:
    from conceptagent_ros.scene.loader import load_scene
    from conceptagent_ros.world.spawn import start_pose

    start = start_pose(load_scene(scene))  # where gazebo.launch.py spawns it
    assert spawn_collisions(description, ROOT / "worlds" / f"{scene}.sdf", start, tmp_path) == []


def test_the_spawn_check_catches_the_arm_straight_out_into_furniture(description, tmp_path) -> None:
    """The arm as it spawned (every joint 0: straight ahead at 0.9 m) before a cabinet 0.6 m ahead
    of the base's front; tucked, the same spawn is clear."""
    sdf = tmp_path / "cabinet.sdf"
    sdf.write_text("""<sdf version="1.9"><world name="w"><model name="cabinet"><static>true</static>
      <pose>0.97 0 0.6 0 0 0</pose><link name="l"><collision name="c"><geometry><box><size>0.3 0.6 1.2</size>
      </box></geometry></collision></link></model></world></sdf>""")
    as_it_was = ET.fromstring(ET.tostring(description))
    for param in as_it_was.iter("param"):
        if param.get("name") == "initial_value":
            param.text = "0.0"
    touched = spawn_collisions(as_it_was, sdf, (0.0, 0.0, 0.0), tmp_path)
    assert touched and all(t.startswith("cabinet") for t in touched), touched
    assert spawn_collisions(description, sdf, (0.0, 0.0, 0.0), tmp_path) == []


# -- rviz ------------------------------------------------------------------------------------------------
RVIZ_TOOLS = {"/goal_pose", "/initialpose", "/clicked_point"}  # rviz's own tools publish these
# what Jazzy's nav2_bringup (bringup_launch.py) publishes that a view may show: map_server's map,
# planner_server's plan, controller_server's local plan, AMCL's particles and pose, the costmaps
NAV2_PUBLISHES = {"/map", "/plan", "/local_plan", "/particle_cloud", "/amcl_pose", "/global_costmap/costmap",
                  "/local_costmap/costmap"}


def _documented_publications(executable: str) -> set[str]:
    """The topics a project node's docstring says it publishes on every robot (the clauses that
    hold only with the household body or the stand-in are left out)."""
    module = ROOT / "conceptagent_ros" / "ros" / f"{executable}.py"
    doc = module.read_text().split('"""')[1]
    topics = set()
    for block in re.findall(r"Publishes:(.*?)(?=\n\w[\w ]*:|\Z)", doc, flags=re.S):
        block = re.split(r"with a household body|with perception camera", " ".join(block.split()))[0]
        topics |= set(re.findall(r"([\w/]+) \((?:\w+_msgs|conceptagent_ros)/\w+", block))
    return topics


def unpublished_rviz_topics(entities: list, bridge: list[dict]) -> list[str]:
    """Topics that an rviz display of the launch reads and no node of the launch publishes."""
    nodes = [e for e in entities if type(e).__name__ == "Node"]
    published = {b["ros_topic_name"] for b in bridge if b["direction"] in ("GZ_TO_ROS", "BIDIRECTIONAL")} | RVIZ_TOOLS
    if any(type(e).__name__ == "IncludeLaunchDescription" and "bringup_launch.py" in str(e.args[0].args[0])
           for e in entities):
        published |= NAV2_PUBLISHES
    for node in nodes:
        if node.kwargs.get("executable") == "robot_state_publisher":
            published.add("/robot_description")
        elif node.kwargs.get("package") == "conceptagent_ros":
            published |= {f"/conceptagent/{t}" for t in _documented_publications(node.kwargs["executable"])}
    [rviz] = [n for n in nodes if n.kwargs.get("package") == "rviz2"]
    view = yaml.safe_load(Path(rviz.kwargs["arguments"][1]).read_text())
    read = []
    for display in view["Visualization Manager"]["Displays"]:
        for key in ("Topic", "Description Topic"):
            if isinstance(display.get(key), dict):
                read.append(display[key]["Value"])
    return sorted(t for t in read if t not in published)


def test_every_topic_the_gazebo_rviz_view_reads_is_published_by_the_launch() -> None:
    from test_gazebo_launch import BRIDGE, _load_launch

    entities = _load_launch()
    assert unpublished_rviz_topics(entities, BRIDGE) == []
    [rviz] = [e for e in entities if type(e).__name__ == "Node" and e.kwargs.get("package") == "rviz2"]
    view = yaml.safe_load(Path(rviz.kwargs["arguments"][1]).read_text())
    shown = {d["Class"] for d in view["Visualization Manager"]["Displays"]}
    assert {"rviz_default_plugins/RobotModel", "rviz_default_plugins/Image", "rviz_default_plugins/Path",
            "rviz_default_plugins/MarkerArray", "rviz_default_plugins/TF"} <= shown  # still the whole view


def test_the_rviz_check_catches_the_embedded_views_topics_on_gazebo(tmp_path) -> None:
    from test_gazebo_launch import BRIDGE, _load_launch

    entities = _load_launch()
    [rviz] = [e for e in entities if type(e).__name__ == "Node" and e.kwargs.get("package") == "rviz2"]
    rviz.kwargs["arguments"][1] = str(ROOT / "rviz" / "conceptagent.rviz")  # the view as the launch gave it
    missing = unpublished_rviz_topics(entities, BRIDGE)
    assert missing == ["/conceptagent/camera/color/image_raw", "/conceptagent/path", "/conceptagent/robot_description",
                       "/conceptagent/robot_pose", "/conceptagent/scene_markers"]
