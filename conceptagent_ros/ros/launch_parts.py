"""What the launch files share: the arguments every ConceptAgent graph takes, the planner node and
rviz. A launch file imports the package it launches, so these live here and not in copies; launch
and launch_ros are ROS's own (not pip-installable): only launch files import this module."""
from __future__ import annotations

import os

from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "conceptagent_ros"
LLMS = "offline | simulated[:RATE] | openai:MODEL (OPENAI_BASE_URL from the environment) | local[:NAME] | hf:PATH"
PLANNERS = "react | base | mcts | llm-planner | tree-planner | grounded-decoding (options as NAME:key=value,...)"


def graph_arguments(params_file: str, params_description: str, *, use_sim_time: str = "false",
                    sim_time_description: str = "use /clock time", rviz_view: str = "ConceptAgent") -> list:
    """namespace, use_sim_time, params_file, llm, planner and rviz, as every graph takes them."""
    return [
        DeclareLaunchArgument("namespace", default_value="conceptagent", description="namespace of every node"),
        DeclareLaunchArgument("use_sim_time", default_value=use_sim_time, description=sim_time_description),
        DeclareLaunchArgument("params_file", default_value=params_file, description=params_description),
        DeclareLaunchArgument("llm", default_value="offline", description=LLMS),
        DeclareLaunchArgument("planner", default_value="react", description=PLANNERS),
        DeclareLaunchArgument("rviz", default_value="true", description=f"start rviz2 with the {rviz_view} view"),
    ]


def planner_node(params: object, namespace: object, sim_time: object) -> Node:
    """The planner with the launch's llm and planner arguments over its params file."""
    return Node(package=PACKAGE, executable="planner_node", name="planner", namespace=namespace, output="screen",
                parameters=[params, {"llm": LaunchConfiguration("llm"), "planner": LaunchConfiguration("planner"),
                                     "use_sim_time": sim_time}])


def rviz_node(share: str, view: str = "conceptagent.rviz", **settings: object) -> Node:
    """rviz2 with a view of rviz/ (or a path), started when the rviz argument is true."""
    path = view if os.path.isabs(view) else os.path.join(share, "rviz", view)
    return Node(package="rviz2", executable="rviz2", name="rviz2", output="log", arguments=["-d", path],
                condition=IfCondition(LaunchConfiguration("rviz")), **settings)
