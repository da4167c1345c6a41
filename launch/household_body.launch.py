"""conceptagent_mm in a household scene's exported world in PyBullet as the robot: the manipulation
node serves every skill (navigate_to drives the base; pick, place, open and close run on the arm;
the rest apply their effects once their preconditions hold) and sends its mast camera's images to
the perception node; the scene graph node builds the planner's graph; the planner takes commands;
rviz shows the robot model, its path and the grasps.

    ros2 launch conceptagent_ros household_body.launch.py scene:=studio_kitchen gui:=true
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
        DeclareLaunchArgument("scene", default_value="studio_kitchen",
                              description="a household scene (studio_kitchen | apartment | family_house) or scene YAML"),
        DeclareLaunchArgument("gui", default_value="false", description="open PyBullet's window on the robot"),
        DeclareLaunchArgument("llm", default_value="offline",
                              description="offline | simulated[:RATE] | openai:MODEL (OPENAI_BASE_URL from the environment)"),
        DeclareLaunchArgument("planner", default_value="react",
                              description="react | base | mcts | llm-planner | tree-planner | grounded-decoding"),
        DeclareLaunchArgument("params_file",
                              default_value=os.path.join(share, "config", "ros", "household_pybullet.yaml"),
                              description="ROS parameters of the manipulation, perception, scene graph and planner nodes"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock time"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2 with the ConceptAgent view"),
    ]


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    params, scene = LaunchConfiguration("params_file"), LaunchConfiguration("scene")
    body = Node(package=PACKAGE, executable="manipulation_node", name="manipulation", namespace=ns, output="screen",
                parameters=[params, {"scene": scene, "gui": LaunchConfiguration("gui"), "use_sim_time": sim_time}])
    perception = Node(package=PACKAGE, executable="perception_node", name="perception", namespace=ns, output="screen",
                      parameters=[params, {"config": os.path.join(share, "config", "perception_simulated.yaml"),
                                           "use_sim_time": sim_time}])
    scene_graph = Node(package=PACKAGE, executable="scene_graph_node", name="scene_graph", namespace=ns,
                       output="screen", parameters=[params, {"map": scene, "use_sim_time": sim_time}])
    planner = Node(package=PACKAGE, executable="planner_node", name="planner", namespace=ns, output="screen",
                   parameters=[params, {"llm": LaunchConfiguration("llm"), "planner": LaunchConfiguration("planner"),
                                        "use_sim_time": sim_time}])
    rviz = Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", os.path.join(share, "rviz", "conceptagent.rviz")],
                condition=IfCondition(LaunchConfiguration("rviz")))
    return LaunchDescription([*launch_arguments(share), body, perception, scene_graph, planner, rviz])
