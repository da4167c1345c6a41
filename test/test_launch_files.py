"""Launch files, checked without launch_ros (not pip-installable): imported with stand-in modules
that record what they are given. Every argument is described, and every executable, params file
and rviz file a launch file names exists and is installed by CMakeLists.txt."""
from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


class Recorded:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration(Recorded):
    def perform(self, context) -> str:  # noqa: ANN001 - a StandInContext
        context.used.add(self.args[0])
        return context.launch_configurations[self.args[0]]


class StandInContext:
    """launch's LaunchContext as an OpaqueFunction sees it: the arguments' values."""

    def __init__(self, launch_configurations: dict[str, str]):
        self.launch_configurations = launch_configurations
        self.used: set[str] = set()


def expand(entities: list, overrides: dict[str, str] | None = None) -> list:
    """The entities with every OpaqueFunction replaced by what it returns for the arguments' defaults
    (and `overrides`), as launch does; the arguments it read are recorded on an `OpaqueUse` entity."""
    values = {e.args[0]: e.kwargs["default_value"] for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    values.update(overrides or {})
    out = []
    for e in entities:
        if type(e).__name__ == "OpaqueFunction":
            context = StandInContext(values)
            out += expand(list(e.kwargs["function"](context, *e.kwargs.get("args", []))), overrides)
            out.append(Recorded(*[LaunchConfiguration(name) for name in sorted(context.used)]))
        else:
            out.append(e)
    return out


def stand_in_modules() -> dict[str, types.ModuleType]:
    names = ["launch", "launch.actions", "launch.conditions", "launch.substitutions", "launch_ros", "launch_ros.actions",
             "launch.launch_description_sources", "ament_index_python", "ament_index_python.packages"]
    mods = {name: types.ModuleType(name) for name in names}
    mods["launch"].LaunchDescription = lambda entities: list(entities)
    mods["launch.actions"].DeclareLaunchArgument = type("DeclareLaunchArgument", (Recorded,), {})
    mods["launch.actions"].IncludeLaunchDescription = type("IncludeLaunchDescription", (Recorded,), {})
    mods["launch.actions"].OpaqueFunction = type("OpaqueFunction", (Recorded,), {})
    mods["launch.launch_description_sources"].PythonLaunchDescriptionSource = type("PythonLaunchDescriptionSource",
                                                                                   (Recorded,), {})
    mods["launch.conditions"].IfCondition = type("IfCondition", (Recorded,), {})
    mods["launch.substitutions"].LaunchConfiguration = LaunchConfiguration
    mods["launch_ros.actions"].Node = type("Node", (Recorded,), {})
    # the install's share/conceptagent_ros mirrors the repository's config/, launch/, rviz/
    mods["ament_index_python.packages"].get_package_share_directory = lambda package: str(ROOT)
    return mods


@pytest.fixture(params=LAUNCH_FILES, ids=lambda p: p.name)
def description(request, monkeypatch):
    for name, module in stand_in_modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(request.param.stem.replace(".", "_"), request.param)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return expand(module.generate_launch_description())


def test_every_argument_is_described_and_used(description):
    declared = [e for e in description if type(e).__name__ == "DeclareLaunchArgument"]
    names = {d.args[0] for d in declared}
    assert {"namespace", "use_sim_time", "params_file", "llm", "planner", "rviz"} <= names
    for d in declared:
        assert len(d.kwargs.get("description", "")) > 10, d.args[0]
        assert "default_value" in d.kwargs

    def used(value, out: set) -> set:
        if isinstance(value, LaunchConfiguration):
            out.add(value.args[0])
        elif isinstance(value, dict):
            for v in value.values():
                used(v, out)
        elif isinstance(value, (list, tuple)):
            for v in value:
                used(v, out)
        elif isinstance(value, Recorded):
            used(list(value.args) + list(value.kwargs.values()), out)
        return out

    consumers = [e for e in description if type(e).__name__ in ("Node", "IncludeLaunchDescription", "Recorded")]
    assert used(consumers, set()) == names  # no argument is declared and then ignored


def test_named_executables_and_files_exist(description):
    cmake = (ROOT / "CMakeLists.txt").read_text()
    for node in (e for e in description if type(e).__name__ == "Node"):
        if node.kwargs["package"] != "conceptagent_ros":
            continue
        executable = node.kwargs["executable"]
        assert (ROOT / "scripts" / executable).is_file(), executable
        assert re.search(rf"scripts/{executable}\b", cmake), f"{executable} is not installed by CMakeLists.txt"
    declared = {e.args[0]: e.kwargs["default_value"] for e in description if type(e).__name__ == "DeclareLaunchArgument"}
    params = Path(declared["params_file"])
    assert params.is_file()
    data = yaml.safe_load(params.read_text())
    assert all("ros__parameters" in body for body in data.values())
    rviz = [n for n in description if type(n).__name__ == "Node" and n.kwargs["package"] == "rviz2"]
    assert rviz and Path(rviz[0].kwargs["arguments"][1]).is_file()
    assert "install(DIRECTORY config launch rviz" in cmake


def test_rviz_config_shows_the_graph():
    rviz = yaml.safe_load((ROOT / "rviz" / "conceptagent.rviz").read_text())
    displays = rviz["Visualization Manager"]["Displays"]
    topics = {d.get("Topic", {}).get("Value") for d in displays if isinstance(d.get("Topic"), dict)}
    assert {"/conceptagent/scene_markers", "/conceptagent/plan_markers", "/conceptagent/robot_pose",
            "/conceptagent/grasp_markers", "/conceptagent/path"} <= topics
    assert any(d["Class"] == "rviz_default_plugins/Image" for d in displays)
    # the robot drawn from the description the household body's manipulation node latches
    [model] = [d for d in displays if d["Class"] == "rviz_default_plugins/RobotModel"]
    assert model["Description Source"] == "Topic"
    assert model["Description Topic"]["Value"] == "/conceptagent/robot_description"
    assert model["Description Topic"]["Durability Policy"] == "Transient Local"


def test_the_manipulation_launch_starts_the_graph_of_the_scene_s_body(monkeypatch):
    """One launch file for both PyBullet bodies: at the tabletop the arm and the planner on the
    tabletop's params; in a household also the perception and scene graph nodes, on the household's."""
    for name, module in stand_in_modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    path = ROOT / "launch" / "manipulation.launch.py"
    spec = importlib.util.spec_from_file_location("manipulation_launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def graph(scene: str) -> tuple[set[str], set[str]]:
        nodes = [e for e in expand(module.generate_launch_description(), {"scene": scene}) if type(e).__name__ == "Node"]
        names = {n.kwargs["name"] for n in nodes}
        files = {Path(p).name for n in nodes for p in n.kwargs.get("parameters", [])[:1] if isinstance(p, str)}
        return names, files

    assert graph("tabletop") == ({"manipulation", "planner", "rviz2"}, {"manipulation_pybullet.yaml"})
    assert graph("studio_kitchen") == ({"manipulation", "planner", "rviz2", "perception", "scene_graph"},
                                       {"household_pybullet.yaml"})
