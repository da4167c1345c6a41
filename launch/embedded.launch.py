"""The whole graph on the embedded world, no robot and no Gazebo: the robot stand-in serves every
skill and publishes the scene graph; the planner takes commands.

    ros2 launch conceptagent_ros embedded.launch.py scene:=apartment rviz:=true
    ros2 topic pub --once /conceptagent/command std_msgs/msg/String "{data: 'put the apple in the fridge'}"
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
        DeclareLaunchArgument("scene", default_value="studio_kitchen", description="embedded scene name or scene YAML path"),
        DeclareLaunchArgument("llm", default_value="offline",
                              description="offline | simulated[:RATE] | openai:MODEL | hf:PATH (grounded-decoding)"),
        DeclareLaunchArgument("planner", default_value="react",
                              description="react | base | mcts | llm-planner | tree-planner | grounded-decoding "
                                          "(options as NAME:key=value,...)"),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "ros", "embedded.yaml"),
                              description="ROS parameters of the robot stand-in and the planner"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock time"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2 with the ConceptAgent view"),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params = LaunchConfiguration("params_file")
    robot = Node(package=PACKAGE, executable="robot_standin_node", name="robot", namespace=ns, output="screen",
                 parameters=[params, {"scene": LaunchConfiguration("scene"), "use_sim_time": sim_time}])
    planner = Node(package=PACKAGE, executable="planner_node", name="planner", namespace=ns, output="screen",
                   parameters=[params, {"llm": LaunchConfiguration("llm"), "planner": LaunchConfiguration("planner"),
                                        "use_sim_time": sim_time}])
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", os.path.join(share, "rviz", "conceptagent.rviz")],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return LaunchDescription([*launch_arguments(share), robot, planner, rviz])
