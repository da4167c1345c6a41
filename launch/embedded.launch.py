"""Run the agent node on the embedded world: `ros2 launch conceptagent_ros embedded.launch.py scene:=apartment`,
then `ros2 topic pub --once /conceptagent/command std_msgs/String "{data: 'put the apple in the fridge'}"`."""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("scene", default_value="studio_kitchen", description="embedded scene name or YAML path"),
        DeclareLaunchArgument("llm", default_value="offline", description="offline | simulated[:RATE] | openai:MODEL | hf:PATH"),
        DeclareLaunchArgument("planner", default_value="react",
                              description="react | base | mcts | llm-planner | tree-planner | grounded-decoding "
                                          "(options as NAME:key=value,...)"),
    ]
    node = Node(
        package="conceptagent_ros", executable="agent_node", name="conceptagent", output="screen",
        parameters=[{"scene": LaunchConfiguration("scene"), "llm": LaunchConfiguration("llm"),
                     "planner": LaunchConfiguration("planner")}],
    )
    return LaunchDescription([*args, node])
