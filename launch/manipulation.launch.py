"""The Franka Panda at the PyBullet tabletop as the robot: the manipulation node serves every skill
(pick, place, open and close planned from its cameras' points; navigate_to, as the arm reaches its
whole table) and publishes the scene graph; the planner takes commands; rviz shows the grasps.

    ros2 launch conceptagent_ros manipulation.launch.py gui:=true
    ros2 topic pub --once /conceptagent/command std_msgs/msg/String "{data: 'put the duck in the tray'}"
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

PACKAGE = "conceptagent_ros"


def launch_arguments(share: str) -> list:
    return [
        DeclareLaunchArgument("namespace", default_value="conceptagent", description="namespace of every node"),
        DeclareLaunchArgument("scene", default_value="tabletop",
                              description="a scene file laying out a table, tray, cabinet and pybullet_data things"),
        DeclareLaunchArgument("gui", default_value="false", description="open PyBullet's window on the arm"),
        DeclareLaunchArgument("llm", default_value="offline",
                              description="offline | simulated[:RATE] | openai:MODEL (OPENAI_BASE_URL from the environment)"),
        DeclareLaunchArgument("planner", default_value="react",
                              description="react | base | mcts | llm-planner | tree-planner | grounded-decoding"),
        DeclareLaunchArgument("params_file",
                              default_value=os.path.join(share, "config", "ros", "manipulation_pybullet.yaml"),
                              description="ROS parameters of the manipulation node and the planner"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock time"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2 with the ConceptAgent view"),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params = LaunchConfiguration("params_file")
    arm = Node(package=PACKAGE, executable="manipulation_node", name="manipulation", namespace=ns, output="screen",
               parameters=[params, {"scene": LaunchConfiguration("scene"), "gui": LaunchConfiguration("gui"),
                                    "use_sim_time": sim_time}])
    planner = Node(package=PACKAGE, executable="planner_node", name="planner", namespace=ns, output="screen",
                   parameters=[params, {"llm": LaunchConfiguration("llm"), "planner": LaunchConfiguration("planner"),
                                        "use_sim_time": sim_time}])
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", os.path.join(share, "rviz", "conceptagent.rviz")],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return LaunchDescription([*launch_arguments(share), arm, planner, rviz])
