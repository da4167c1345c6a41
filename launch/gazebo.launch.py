"""ConceptAgent against Gazebo: the scene's exported world in gz sim, the conceptagent_mm robot spawned
at the scene's start, ros_gz_bridge (config/gazebo/bridge.yaml), robot_state_publisher, the
ros2_control spawners (arm, gripper and the camera's tilt, config/gazebo/controllers.yaml), Nav2 on the exported map
(config/gazebo/nav2_params.yaml), then the perception, scene graph, planner, robot skills and
manipulation nodes (config/gazebo/conceptagent_mm.yaml) and rviz.

    ros2 launch conceptagent_ros gazebo.launch.py scene:=apartment
    ros2 launch conceptagent_ros gazebo.launch.py scene:=family_house headless:=true rviz:=false llm:=openai:MODEL

Needs ros_gz_sim, ros_gz_bridge, gz_ros2_control, nav2_bringup, robot_state_publisher and
controller_manager (package.xml lists them) and the worlds in share/conceptagent_ros/worlds
(`make worlds`; colcon installs them).
"""
import os
import tempfile

import yaml
from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from conceptagent_ros.ros.launch_parts import PACKAGE, graph_arguments, planner_node, rviz_node
from launch import LaunchDescription

ROBOT = "conceptagent_mm"
# the camera's topics as the bridge names them (the perception node's rgb, depth and camera_info)
CAMERA_REMAPPINGS = [("rgb", "/camera/image"), ("depth", "/camera/depth_image"), ("camera_info", "/camera/camera_info")]


def launch_arguments(share: str) -> list:
    gazebo = os.path.join(share, "config", "gazebo")
    return [
        DeclareLaunchArgument("scene", default_value="studio_kitchen",
                              description="built-in household scene: worlds/SCENE.sdf and worlds/SCENE_map.yaml"),
        DeclareLaunchArgument("headless", default_value="false", description="run gz sim without its window"),
        *graph_arguments(os.path.join(gazebo, "conceptagent_mm.yaml"), "ROS parameters of ConceptAgent's nodes for this robot",
                         use_sim_time="true", sim_time_description="use gz sim's /clock (keep true)"),
        DeclareLaunchArgument("nav2_params_file", default_value=os.path.join(gazebo, "nav2_params.yaml"),
                              description="Nav2's parameters for this robot (the initial pose is set per scene)"),
    ]


# The embedded graph's view, on what this graph publishes: robot_state_publisher's description, the
# bridged camera, Nav2's global plan (planner_server's `plan`); its robot-pose arrow and the
# stand-in's world markers have no publisher here (the robot model is drawn from TF)
RVIZ_TOPICS = {"/conceptagent/robot_description": "/robot_description",
               "/conceptagent/camera/color/image_raw": "/camera/image", "/conceptagent/path": "/plan"}
# without a window: the server alone, and ogre2's sensors (the RGB-D camera, gpu_lidar) rendered
# without a display, which `gz sim -s` alone does not do (gz-sim's --headless-rendering option)
HEADLESS = "-s --headless-rendering "
RVIZ_DROPPED = {"/conceptagent/robot_pose", "/conceptagent/scene_markers"}


def scene_parts(context, share: str) -> list:  # noqa: ANN001 - launch's LaunchContext
    """What depends on the scene: the world, the robot's start, Nav2's map and initial pose."""
    from conceptagent_ros.scene.loader import load_scene
    from conceptagent_ros.world.robot_description import robot_urdf
    from conceptagent_ros.world.spawn import start_pose

    scene = LaunchConfiguration("scene").perform(context)
    headless = LaunchConfiguration("headless").perform(context).lower() in ("true", "1")
    sim_time = LaunchConfiguration("use_sim_time").perform(context)
    world = os.path.join(share, "worlds", f"{scene}.sdf")
    map_yaml = os.path.join(share, "worlds", f"{scene}_map.yaml")
    x, y, yaw = start_pose(load_scene(scene))
    scratch = tempfile.mkdtemp(prefix="conceptagent_gazebo_")
    # the description with its ros2_control block, for robot_state_publisher, the spawn and the arm's reach
    urdf = robot_urdf(controllers_file=os.path.join(share, "config", "gazebo", "controllers.yaml"))
    urdf_path = os.path.join(scratch, f"{ROBOT}.urdf")
    with open(urdf_path, "w") as f:
        f.write(urdf)
    # the arm's reach check solves IK over every joint its URDF moves: with the torso a fixed joint
    # (the torso controller holds it where it is, at its lowest unless commanded) the IK is the arm's
    kinematics_path = os.path.join(scratch, f"{ROBOT}_arm.urdf")
    with open(kinematics_path, "w") as f:
        f.write(robot_urdf(gazebo=False, torso_fixed=True))
    # Nav2's parameters with AMCL started where the robot is spawned
    with open(LaunchConfiguration("nav2_params_file").perform(context)) as f:
        nav2 = yaml.safe_load(f)
    nav2["amcl"]["ros__parameters"]["initial_pose"] = {"x": x, "y": y, "z": 0.0, "yaw": yaw}
    nav2_path = os.path.join(scratch, "nav2_params.yaml")
    with open(nav2_path, "w") as f:
        yaml.safe_dump(nav2, f)
    gz_sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(get_package_share_directory("ros_gz_sim"), "launch", "gz_sim.launch.py")),
        launch_arguments={"gz_args": f"-r {HEADLESS if headless else ''}{world}", "on_exit_shutdown": "true"}.items())
    state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                           parameters=[{"robot_description": urdf, "use_sim_time": sim_time == "true"}])
    spawn = Node(package="ros_gz_sim", executable="create", output="screen",
                 arguments=["-name", ROBOT, "-topic", "robot_description", "-x", f"{x:.3f}", "-y", f"{y:.3f}",
                            "-z", "0.02", "-Y", f"{yaw:.3f}"])
    nav = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(get_package_share_directory("nav2_bringup"), "launch",
                                                   "bringup_launch.py")),
        launch_arguments={"map": map_yaml, "params_file": nav2_path, "use_sim_time": sim_time,
                          "autostart": "true"}.items())
    ns = LaunchConfiguration("namespace")
    manipulation = Node(package=PACKAGE, executable="manipulation_node", name="manipulation", namespace=ns,
                        output="screen", parameters=[LaunchConfiguration("params_file"),
                                                     {"kinematics.urdf": kinematics_path,
                                                      "use_sim_time": sim_time == "true"}])
    # rviz with the embedded view turned to this graph's topics (RVIZ_TOPICS)
    rviz_path = os.path.join(scratch, "conceptagent.rviz")
    with open(os.path.join(share, "rviz", "conceptagent.rviz")) as f:
        view = yaml.safe_load(f)
    kept = []
    for display in view["Visualization Manager"]["Displays"]:
        for key in ("Topic", "Description Topic"):
            if isinstance(display.get(key), dict):
                display[key]["Value"] = RVIZ_TOPICS.get(display[key]["Value"], display[key]["Value"])
        if not (isinstance(display.get("Topic"), dict) and display["Topic"]["Value"] in RVIZ_DROPPED):
            kept.append(display)
    view["Visualization Manager"]["Displays"] = kept
    with open(rviz_path, "w") as f:
        yaml.safe_dump(view, f, sort_keys=False)
    rviz = rviz_node(share, rviz_path, parameters=[{"use_sim_time": sim_time == "true"}])
    return [gz_sim, state_publisher, spawn, nav, manipulation, rviz]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params = LaunchConfiguration("params_file")
    bridge = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                  parameters=[{"config_file": os.path.join(share, "config", "gazebo", "bridge.yaml"),
                               "use_sim_time": sim_time}])
    spawners = Node(package="controller_manager", executable="spawner", output="screen",
                    arguments=["joint_state_broadcaster", "arm_controller", "gripper_controller",
                               "camera_tilt_controller", "torso_controller", "--controller-manager", "/controller_manager"])
    perception = Node(package=PACKAGE, executable="perception_node", name="perception", namespace=ns, output="screen",
                      parameters=[params, {"use_sim_time": sim_time}], remappings=CAMERA_REMAPPINGS)
    scene_graph = Node(package=PACKAGE, executable="scene_graph_node", name="scene_graph", namespace=ns,
                       output="screen", parameters=[params, {"map": LaunchConfiguration("scene"),
                                                             "use_sim_time": sim_time}])
    planner = planner_node(params, ns, sim_time)
    # approach poses on Nav2's /map, kept from seeing through the scene's walls
    skills = Node(package=PACKAGE, executable="robot_skills_node", name="robot_skills", namespace=ns, output="screen",
                  parameters=[params, {"navigation.scene": LaunchConfiguration("scene"), "use_sim_time": sim_time}])
    return LaunchDescription([*launch_arguments(share), OpaqueFunction(function=scene_parts, args=[share]), bridge,
                              spawners, perception, scene_graph, planner, skills])
