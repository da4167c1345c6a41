"""The Gazebo bring-up checked here without Gazebo, ros_gz or launch_ros: launch/gazebo.launch.py run
with launch's stand-ins (test_launch_files), its packages against package.xml, its files on disk;
every topic config/gazebo/bridge.yaml bridges against the description's Gazebo topics and against
the node or Nav2 interface that uses it on the ROS side, with the same type (the perception node
built for real with the launch's remappings); Nav2's parameters against the description and the
bridge; ConceptAgent's parameters against what each node declares; the controllers against the
description's ros2_control joints."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_launch_files import expand, stand_in_modules

from conceptagent_ros.scene.loader import list_scenes

ROOT = Path(__file__).resolve().parent.parent
GAZEBO = ROOT / "config" / "gazebo"
BRIDGE = yaml.safe_load((GAZEBO / "bridge.yaml").read_text())
NAV2 = yaml.safe_load((GAZEBO / "nav2_params.yaml").read_text())
# ros_gz_bridge's pairs of message types for what this robot bridges (ros_gz_bridge/README.md)
BRIDGEABLE = {"rosgraph_msgs/msg/Clock": "gz.msgs.Clock", "sensor_msgs/msg/Image": "gz.msgs.Image",
              "sensor_msgs/msg/CameraInfo": "gz.msgs.CameraInfo", "sensor_msgs/msg/LaserScan": "gz.msgs.LaserScan",
              "nav_msgs/msg/Odometry": "gz.msgs.Odometry", "tf2_msgs/msg/TFMessage": "gz.msgs.Pose_V",
              "geometry_msgs/msg/Twist": "gz.msgs.Twist", "sensor_msgs/msg/JointState": "gz.msgs.Model"}
# what ROS itself does with these topics: tf2 listeners, every node on sim time, robot_state_publisher
STANDARD = {"/tf": "tf2_msgs/msg/TFMessage", "/clock": "rosgraph_msgs/msg/Clock",
            "/joint_states": "sensor_msgs/msg/JointState"}
# Jazzy's nav2_bringup starts these (localization_launch.py and navigation_launch.py's lifecycle nodes)
NAV2_NODES = {"map_server", "amcl", "controller_server", "smoother_server", "planner_server", "route_server",
              "behavior_server", "velocity_smoother", "collision_monitor", "bt_navigator", "waypoint_follower",
              "docking_server"}


def _load_launch(overrides: dict[str, str] | None = None) -> list:
    """gazebo.launch.py's entities with launch's stand-ins, its OpaqueFunction run for the arguments'
    defaults and `overrides`."""
    import importlib.util

    saved = {name: sys.modules.get(name) for name in stand_in_modules()}
    sys.modules.update(stand_in_modules())
    try:
        spec = importlib.util.spec_from_file_location("gazebo_launch", ROOT / "launch" / "gazebo.launch.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return expand(module.generate_launch_description(), overrides)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@pytest.fixture(scope="module")
def launch() -> list:
    return _load_launch()


@pytest.fixture(scope="module")
def urdf(tmp_path_factory) -> ET.Element:
    out = tmp_path_factory.mktemp("gz") / "robot.urdf"
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "robot", "urdf", "--controllers",
                           str(GAZEBO / "controllers.yaml"), "--out", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return ET.parse(out).getroot()


def _kind(entity) -> str:  # noqa: ANN001 - a recorded stand-in
    return type(entity).__name__


def test_every_package_the_launch_uses_is_a_dependency(launch) -> None:
    package = ET.parse(ROOT / "package.xml").getroot()
    depends = {e.text for e in package if e.tag in ("depend", "exec_depend")}
    used = {e.kwargs["package"] for e in launch if _kind(e) == "Node"}
    # the stand-in resolves every share directory to the repository: the included files say whose they are
    includes = sorted(Path(e.args[0].args[0]).name for e in launch if _kind(e) == "IncludeLaunchDescription")
    assert includes == ["bringup_launch.py", "gz_sim.launch.py"]
    used |= {"nav2_bringup", "ros_gz_sim"}
    missing = used - depends - {"conceptagent_ros"}
    assert not missing, f"package.xml lacks {missing}"
    assert {"ros_gz_sim", "ros_gz_bridge", "nav2_bringup", "gz_ros2_control", "xacro", "robot_state_publisher",
            "controller_manager"} <= depends


@pytest.mark.parametrize("scene", list_scenes("household"))
def test_each_scene_brings_its_world_map_and_a_free_start(scene) -> None:
    from PIL import Image

    entities = _load_launch({"scene": scene})
    gz = next(e for e in entities if _kind(e) == "IncludeLaunchDescription" and "gz_sim" in e.args[0].args[0])
    world = Path(dict(gz.kwargs["launch_arguments"])["gz_args"].split()[-1])
    assert world.is_file() and world.name == f"{scene}.sdf"
    nav = next(e for e in entities if _kind(e) == "IncludeLaunchDescription" and "bringup" in e.args[0].args[0])
    nav_args = dict(nav.kwargs["launch_arguments"])
    map_yaml = Path(nav_args["map"])
    assert map_yaml.is_file() and map_yaml.name == f"{scene}_map.yaml"
    spawn = next(e for e in entities if _kind(e) == "Node" and e.kwargs["executable"] == "create")
    arguments = spawn.kwargs["arguments"]
    x, y = float(arguments[arguments.index("-x") + 1]), float(arguments[arguments.index("-y") + 1])
    initial = yaml.safe_load(Path(nav_args["params_file"]).read_text())["amcl"]["ros__parameters"]["initial_pose"]
    assert (initial["x"], initial["y"]) == pytest.approx((x, y))  # AMCL starts where the robot is spawned
    # the spawn stands on free map cells, the base's whole footprint
    meta = yaml.safe_load(map_yaml.read_text())
    image = Image.open(map_yaml.parent / meta["image"])
    free = (255 - np.asarray(image, dtype=float)) / 255.0 < meta["free_thresh"]
    res, (ox, oy) = meta["resolution"], meta["origin"][:2]
    rows = free.shape[0]
    for dx in (-0.22, 0.0, 0.22):
        for dy in (-0.22, 0.0, 0.22):
            col, row = int((x + dx - ox) / res), rows - 1 - int((y + dy - oy) / res)
            assert free[row, col], (scene, x + dx, y + dy)


def _description_topics(urdf: ET.Element) -> dict[str, str]:
    """Gazebo topics the description's sensors and plugins publish or take, made absolute."""
    def absolute(topic: str) -> str:
        return topic if topic.startswith("/") else "/" + topic

    topics: dict[str, str] = {"/clock": "gz.msgs.Clock"}
    for sensor in urdf.iter("sensor"):
        base = absolute(sensor.findtext("topic"))
        if sensor.get("type") == "rgbd_camera":
            topics.update({f"{base}/image": "gz.msgs.Image", f"{base}/depth_image": "gz.msgs.Image",
                           f"{base}/camera_info": "gz.msgs.CameraInfo"})
        elif sensor.get("type") == "gpu_lidar":
            topics[base] = "gz.msgs.LaserScan"
    for plugin in urdf.iter("plugin"):
        if plugin.get("filename") == "gz-sim-diff-drive-system":
            topics[absolute(plugin.findtext("topic"))] = "gz.msgs.Twist"
            topics[absolute(plugin.findtext("odom_topic"))] = "gz.msgs.Odometry"
            topics[absolute(plugin.findtext("tf_topic"))] = "gz.msgs.Pose_V"
        if plugin.get("filename") == "gz-sim-joint-state-publisher-system":
            topics[absolute(plugin.findtext("topic"))] = "gz.msgs.Model"
    return topics


def test_every_bridged_gazebo_topic_is_one_the_robot_has(urdf) -> None:
    gz_topics = _description_topics(urdf)
    for entry in BRIDGE:
        assert {"ros_topic_name", "gz_topic_name", "ros_type_name", "gz_type_name", "direction"} <= set(entry), entry
        assert BRIDGEABLE.get(entry["ros_type_name"]) == entry["gz_type_name"], entry
        assert gz_topics.get(entry["gz_topic_name"]) == entry["gz_type_name"], entry
        assert entry["direction"] == ("ROS_TO_GZ" if entry["gz_type_name"] == "gz.msgs.Twist" else "GZ_TO_ROS")


@pytest.fixture
def perception_topics(launch, ros_context, tmp_path) -> dict[str, str]:
    """The topics the perception node subscribes with the launch's remappings, as rclpy reports them
    (its models are stood in by ones that need no weights: the topics are the same)."""
    from rclpy.parameter import Parameter

    from conceptagent_ros.ros.perception_node import PerceptionNode

    node_entity = next(e for e in launch if _kind(e) == "Node" and e.kwargs["executable"] == "perception_node")
    remaps = [arg for old, new in node_entity.kwargs["remappings"] for arg in ("-r", f"{old}:={new}")]
    config = tmp_path / "perception.yaml"
    config.write_text(yaml.safe_dump({"detector": {"kind": "sim_paint"}, "segmenter": {"kind": "box"},
                                      "embedder": {"kind": "none"}, "vocabulary": ["apple"]}))
    node = PerceptionNode(context=ros_context, cli_args=["--ros-args", *remaps], parameter_overrides=[
        Parameter("config", value=str(config)), Parameter("pose_source", value="topic")])
    try:
        from conceptagent_ros.ros.spin import autostart_lifecycle

        autostart_lifecycle(node)  # as its main() does: configure and activate, which subscribes
        return {s.topic_name: f"{s.msg_type.__module__.split('.')[0]}/msg/{s.msg_type.__name__}"
                for s in node.subscriptions}
    finally:
        node.destroy_node()


def test_every_bridged_ros_topic_is_used_with_its_type(perception_topics) -> None:
    nav2 = {}
    for section in ("local_costmap", "global_costmap"):
        scan = NAV2[section][section]["ros__parameters"]
        layer = "voxel_layer" if "voxel_layer" in scan else "obstacle_layer"
        nav2[scan[layer]["scan"]["topic"]] = "sensor_msgs/msg/LaserScan"
    nav2["/" + NAV2["amcl"]["ros__parameters"]["scan_topic"].lstrip("/")] = "sensor_msgs/msg/LaserScan"
    nav2[NAV2["bt_navigator"]["ros__parameters"]["odom_topic"]] = "nav_msgs/msg/Odometry"
    nav2[NAV2["velocity_smoother"]["ros__parameters"]["odom_topic"]] = "nav_msgs/msg/Odometry"
    nav2[NAV2["collision_monitor"]["ros__parameters"]["cmd_vel_out_topic"]] = "geometry_msgs/msg/Twist"
    users = {**STANDARD, **nav2, **perception_topics}
    for entry in BRIDGE:
        topic = entry["ros_topic_name"]
        assert users.get(topic) == entry["ros_type_name"], (topic, users.get(topic))
    for camera in ("/camera/image", "/camera/depth_image", "/camera/camera_info"):
        assert camera in perception_topics  # the perception node listens to the mast camera


def test_nav2_parameters_agree_with_the_robot_and_bridge(urdf) -> None:
    assert NAV2_NODES <= set(NAV2)
    links = {link.get("name") for link in urdf.iter("link")}
    base = next(link for link in urdf.iter("link") if link.get("name") == "base_link")
    radius = float(base.find("collision/geometry/cylinder").get("radius"))
    for section in ("local_costmap", "global_costmap"):
        params = NAV2[section][section]["ros__parameters"]
        assert params["robot_radius"] == pytest.approx(radius)
        assert params["robot_base_frame"] in links
    for name, params in NAV2.items():
        params = params.get("ros__parameters", {})
        for key in ("base_frame_id", "robot_base_frame", "base_frame"):
            if key in params:
                assert params[key] in links, (name, key)
        assert params == {} or params.get("use_sim_time") is True, name
    bridged = {e["ros_type_name"]: e["ros_topic_name"] for e in BRIDGE}
    assert NAV2["bt_navigator"]["ros__parameters"]["odom_topic"] == bridged["nav_msgs/msg/Odometry"]
    assert NAV2["collision_monitor"]["ros__parameters"]["cmd_vel_out_topic"] == bridged["geometry_msgs/msg/Twist"]


def _declared(module: Path) -> list[str]:
    """Parameter names the node's source declares (declare_parameter(...), directly or through a
    local name bound to it), as regular expressions: an f-string's fields match anything."""
    tree = ast.parse(module.read_text())
    aliases = {"declare_parameter"}  # and local names bound to it: `p = self.declare_parameter`
    for assign in (n for n in ast.walk(tree) if isinstance(n, ast.Assign)):
        pairs = [(assign.targets[0], assign.value)]
        if isinstance(assign.targets[0], ast.Tuple) and isinstance(assign.value, ast.Tuple):
            pairs = list(zip(assign.targets[0].elts, assign.value.elts))
        for target, value in pairs:
            if isinstance(target, ast.Name) and isinstance(value, ast.Attribute) and value.attr == "declare_parameter":
                aliases.add(target.id)
    names = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in aliases:
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.append(re.escape(first.value))
        elif isinstance(first, ast.JoinedStr):
            names.append("".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in first.values))
    return names


def test_conceptagent_parameters_are_ones_the_nodes_declare(launch) -> None:
    modules = {"planner": ["planner_node.py"], "robot_skills": ["robot_skills_node.py"],
               "perception": ["perception_node.py"], "scene_graph": ["scene_graph_node.py"],
               "manipulation": ["manipulation_node.py"]}
    params = yaml.safe_load((GAZEBO / "conceptagent_mm.yaml").read_text())
    nodes = {e.kwargs["name"] for e in launch if _kind(e) == "Node" and e.kwargs["package"] == "conceptagent_ros"}
    assert {f"/conceptagent/{n}" for n in nodes} == set(params)
    for section, body in params.items():
        name = section.rsplit("/", 1)[1]
        declared = [p for m in modules[name] for p in _declared(ROOT / "conceptagent_ros" / "ros" / m)]
        assert declared, name
        for key in body["ros__parameters"]:
            assert any(re.fullmatch(p, key) for p in declared), f"{name} declares no parameter {key}"


def test_the_parameter_check_catches_a_name_no_node_declares() -> None:
    declared = _declared(ROOT / "conceptagent_ros" / "ros" / "robot_skills_node.py")
    assert any(re.fullmatch(p, "forward.pick.action") for p in declared)
    assert not any(re.fullmatch(p, "navigation.standof") for p in declared)


def test_the_controllers_drive_the_descriptions_joints(urdf) -> None:
    controllers = yaml.safe_load((GAZEBO / "controllers.yaml").read_text())
    # the joints ros2_control commands (the mimic finger is listed with state interfaces only)
    hardware = {j.get("name") for block in urdf.iter("ros2_control") for j in block.iter("joint")
                if j.find("command_interface") is not None}
    joints = {j.get("name"): j.get("type") for j in urdf.iter("joint") if j.get("type")}
    arm = controllers["arm_controller"]["ros__parameters"]["joints"]
    gripper = controllers["gripper_controller"]["ros__parameters"]["joint"]
    head = controllers["camera_tilt_controller"]["ros__parameters"]["joints"]
    torso = controllers["torso_controller"]["ros__parameters"]["joints"]
    assert set(arm) | {gripper} | set(head) | set(torso) == hardware
    assert all(joints[j] == "revolute" for j in arm + head)
    assert all(joints[j] == "prismatic" for j in [gripper, *torso])
    manager = controllers["controller_manager"]["ros__parameters"]
    assert {"joint_state_broadcaster", "arm_controller", "gripper_controller", "camera_tilt_controller",
            "torso_controller"} <= set(manager)
    # every controller the manager knows is spawned by the launch
    launch = (ROOT / "launch" / "gazebo.launch.py").read_text()
    assert all(f'"{name}"' in launch for name in manager if name not in ("update_rate", "use_sim_time"))
    params = yaml.safe_load((GAZEBO / "conceptagent_mm.yaml").read_text())["/conceptagent/manipulation"]["ros__parameters"]
    assert params["kinematics.joint_names"] == arm
    assert params["arm.fjt_action"] == "/arm_controller/follow_joint_trajectory"
    assert params["gripper.action"] == "/gripper_controller/gripper_cmd"


def test_the_arms_reach_check_solves_over_the_arm_alone(launch) -> None:
    """The manipulation node's kinematics URDF has the torso fixed: PyBullet's IK moves every joint
    a URDF leaves free, and a reach found by lifting the torso is one the arm controller cannot do."""
    [node] = [e for e in launch if _kind(e) == "Node" and e.kwargs.get("executable") == "manipulation_node"]
    given = next(p for p in node.kwargs["parameters"] if isinstance(p, dict) and "kinematics.urdf" in p)
    text = Path(given["kinematics.urdf"]).read_text()
    assert '<joint name="torso_lift_joint" type="fixed">' in text


def test_headless_renders_the_sensors_without_a_display() -> None:
    """`gz sim -s` alone leaves ogre2's sensors without a render context on a machine with no display."""
    for headless, expected in (("true", "-r -s --headless-rendering "), ("false", "-r ")):
        entities = _load_launch({"headless": headless})
        gz = next(e for e in entities if _kind(e) == "IncludeLaunchDescription" and "gz_sim" in e.args[0].args[0])
        assert dict(gz.kwargs["launch_arguments"])["gz_args"].startswith(expected)
