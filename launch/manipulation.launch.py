"""A body in PyBullet as the robot, chosen by the scene (bodies/factory.make_body):

- at the tabletop (scene:=tabletop, the default) the Franka Panda: the manipulation node serves
  every skill (pick, place, open and close planned from its cameras' points; navigate_to, as the arm
  reaches its whole table) and publishes the scene graph; rviz shows the grasps;
- in a household (scene:=studio_kitchen | apartment | family_house) conceptagent_mm in the scene's
  exported world: navigate_to drives the base, pick, place, open and close run on the arm, the rest
  apply their effects once their preconditions hold; its mast camera's images go to the perception
  node and the scene graph node builds the planner's graph; rviz shows the robot, its path, the grasps.

    ros2 launch conceptagent_ros manipulation.launch.py gui:=true
    ros2 topic pub --once /conceptagent/command std_msgs/msg/String "{data: 'put the duck in the tray'}"
    ros2 launch conceptagent_ros manipulation.launch.py scene:=studio_kitchen gui:=true
    ros2 topic pub --once /conceptagent/command std_msgs/msg/String "{data: 'put the apple in the fridge'}"
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from conceptagent_ros.ros.launch_parts import PACKAGE, graph_arguments, planner_node, rviz_node
from launch import LaunchDescription


def launch_arguments(share: str) -> list:
    ros = os.path.join(share, "config", "ros")
    return [
        *graph_arguments(os.path.join(ros, "manipulation_pybullet.yaml"),
                         "ROS parameters of the manipulation node and the planner at the tabletop"),
        DeclareLaunchArgument("household_params_file", default_value=os.path.join(ros, "household_pybullet.yaml"),
                              description="ROS parameters of the manipulation, perception, scene graph and planner "
                                          "nodes in a household scene"),
        DeclareLaunchArgument("scene", default_value="tabletop",
                              description="tabletop (a table, tray, cabinet and pybullet_data things) or a household "
                                          "scene (studio_kitchen | apartment | family_house), or a scene YAML"),
        DeclareLaunchArgument("gui", default_value="false", description="open PyBullet's window on the robot"),
    ]


def body_graph(context, share: str) -> list:  # noqa: ANN001 - launch's LaunchContext
    """The nodes for the scene's kind of body, read when the scene argument is known."""
    from conceptagent_ros.bodies.traits import physical_body_traits
    from conceptagent_ros.scene.loader import load_scene

    scene = LaunchConfiguration("scene").perform(context)
    tabletop, household = (LaunchConfiguration(name).perform(context) for name in ("params_file", "household_params_file"))
    in_house = physical_body_traits(load_scene(scene)).mobile
    params = household if in_house else tabletop
    ns, sim_time = LaunchConfiguration("namespace"), LaunchConfiguration("use_sim_time")
    body = Node(package=PACKAGE, executable="manipulation_node", name="manipulation", namespace=ns, output="screen",
                parameters=[params, {"scene": scene, "gui": LaunchConfiguration("gui"), "use_sim_time": sim_time}])
    nodes = [body, planner_node(params, ns, sim_time), rviz_node(share)]
    if in_house:  # the body's images to perception, and the planner's graph from the perceived one
        nodes += [Node(package=PACKAGE, executable="perception_node", name="perception", namespace=ns, output="screen",
                       parameters=[params, {"config": os.path.join(share, "config", "perception_simulated.yaml"),
                                            "use_sim_time": sim_time}]),
                  Node(package=PACKAGE, executable="scene_graph_node", name="scene_graph", namespace=ns,
                       output="screen", parameters=[params, {"map": scene, "use_sim_time": sim_time}])]
    return nodes


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    return LaunchDescription([*launch_arguments(share), OpaqueFunction(function=body_graph, args=[share])])
