"""ConceptAgent on a real robot (or a Gazebo robot that runs Nav2): planner, Nav2-backed navigation
and forwarded manipulation skills (to the manipulation node with manipulation:=true, or your own
stack's servers), spoken commands, the RGB-D perception node, rviz. The perception
node fuses the camera's frames into perceived_graph (remap its rgb, depth, camera_info and pose
topics to your driver's in the params file or with ros2 launch remappings); the scene graph node
turns it, with the robot's pose and what the skills did, into the scene_graph the planner reads.

    ros2 launch conceptagent_ros conceptagent.launch.py params_file:=/path/my_robot.yaml llm:=openai:MODEL
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from conceptagent_ros.ros.launch_parts import PACKAGE, graph_arguments, planner_node, rviz_node
from launch import LaunchDescription


def launch_arguments(share: str) -> list:
    return [
        *graph_arguments(os.path.join(share, "config", "ros", "robot.yaml"),
                         "ROS parameters of the planner, skill adapters and speech node",
                         sim_time_description="use /clock time (true in Gazebo)"),
        DeclareLaunchArgument("speech", default_value="false", description="start the Whisper speech node"),
        DeclareLaunchArgument("perception", default_value="true",
                              description="start the RGB-D perception node (models from config/perception.yaml)"),
        DeclareLaunchArgument("manipulation", default_value="false",
                              description="start the manipulation node: pick, place, open, close on your arm "
                                          "(robot_skills forwards them to it)"),
        DeclareLaunchArgument("manipulation_params_file",
                              default_value=os.path.join(share, "config", "ros", "manipulation_panda.yaml"),
                              description="the manipulation node's parameters for your arm, gripper and hand"),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params = LaunchConfiguration("params_file")
    planner = planner_node(params, ns, sim_time)
    skills = Node(package=PACKAGE, executable="robot_skills_node", name="robot_skills", namespace=ns, output="screen",
                  parameters=[params, {"use_sim_time": sim_time}])
    speech = Node(package=PACKAGE, executable="speech_node", name="speech", namespace=ns, output="screen",
                  parameters=[params, {"use_sim_time": sim_time}], condition=IfCondition(LaunchConfiguration("speech")))
    perception = Node(package=PACKAGE, executable="perception_node", name="perception", namespace=ns, output="screen",
                      parameters=[params, {"use_sim_time": sim_time}],
                      condition=IfCondition(LaunchConfiguration("perception")))
    # perceived_graph + robot pose + skill outcomes -> scene_graph (with perception; else bring your own)
    scene_graph = Node(package=PACKAGE, executable="scene_graph_node", name="scene_graph", namespace=ns, output="screen",
                       parameters=[params, {"use_sim_time": sim_time}],
                       condition=IfCondition(LaunchConfiguration("perception")))
    # pick / place / open / close planned on the perception node's points, on your arm's controllers
    manipulation = Node(package=PACKAGE, executable="manipulation_node", name="manipulation", namespace=ns,
                        output="screen", parameters=[LaunchConfiguration("manipulation_params_file"),
                                                     {"use_sim_time": sim_time}],
                        condition=IfCondition(LaunchConfiguration("manipulation")))
    rviz = rviz_node(share)
    return LaunchDescription([*launch_arguments(share), planner, skills, speech, perception, scene_graph, manipulation,
                              rviz])
