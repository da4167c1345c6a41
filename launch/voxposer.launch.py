"""VoxPoser's trajectory node and rviz: the PyBullet Franka tabletop by default, or your arm.

    ros2 launch conceptagent_ros voxposer.launch.py                       # simulated arm in the node
    ros2 launch conceptagent_ros voxposer.launch.py arm:=pose_topic       # a Cartesian set-point controller
    ros2 action send_goal /conceptagent/voxposer/synthesize_trajectory conceptagent_ros/action/SynthesizeTrajectory \
        "{instruction: 'move to the top of the blue block'}" --feedback
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

PACKAGE = "conceptagent_ros"


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    arguments = [
        DeclareLaunchArgument("namespace", default_value="conceptagent", description="namespace of the node"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock time (true in Gazebo)"),
        DeclareLaunchArgument("params_file", default_value=os.path.join(share, "config", "ros", "voxposer.yaml"),
                              description="ROS parameters of the VoxPoser node (arm, topics, workspace)"),
        DeclareLaunchArgument("arm", default_value="sim",
                              description="sim | pose_topic | follow_joint_trajectory (see the params file)"),
        DeclareLaunchArgument("llm", default_value="offline",
                              description="offline | openai:MODEL (OPENAI_BASE_URL from the environment)"),
        DeclareLaunchArgument("planner", default_value="fast", description="fast | reference value-map planner"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2 with the VoxPoser view"),
    ]
    voxposer = Node(package=PACKAGE, executable="voxposer_node", name="voxposer",
                    namespace=LaunchConfiguration("namespace"), output="screen",
                    parameters=[LaunchConfiguration("params_file"),
                                {"arm": LaunchConfiguration("arm"), "llm": LaunchConfiguration("llm"),
                                 "planner": LaunchConfiguration("planner"),
                                 "use_sim_time": LaunchConfiguration("use_sim_time")}])
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", os.path.join(share, "rviz", "voxposer.rviz")],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return LaunchDescription([*arguments, voxposer, rviz])
