"""The whole graph on the embedded world, no robot and no Gazebo: the robot stand-in serves every
skill and publishes the scene graph; the planner takes commands.

    ros2 launch conceptagent_ros embedded.launch.py scene:=apartment rviz:=true
    ros2 topic pub --once /conceptagent/command std_msgs/msg/String "{data: 'put the apple in the fridge'}"
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from conceptagent_ros.ros.launch_parts import PACKAGE, graph_arguments, planner_node, rviz_node
from launch import LaunchDescription


def launch_arguments(share: str) -> list:
    return [
        *graph_arguments(os.path.join(share, "config", "ros", "embedded.yaml"),
                         "ROS parameters of the robot stand-in and the planner"),
        DeclareLaunchArgument("scene", default_value="studio_kitchen", description="embedded scene name or scene YAML path"),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params = LaunchConfiguration("params_file")
    robot = Node(package=PACKAGE, executable="robot_standin_node", name="robot", namespace=ns, output="screen",
                 parameters=[params, {"scene": LaunchConfiguration("scene"), "use_sim_time": sim_time}])
    return LaunchDescription([*launch_arguments(share), robot, planner_node(params, ns, sim_time), rviz_node(share)])
