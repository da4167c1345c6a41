"""One task against any robot: the wiring of goal, PDDL domain, verifier, planner, scene graph and
agent that both the embedded episode (evaluation/episode.py) and the ROS planner node (ros/planner_node.py)
use. Nothing here knows where observations come from or how skills run: that is the
RobotInterface's business.

`prepare_task` does everything that can fail on bad input (instruction, goal, planner spec, LLM
spec) before the robot moves; `run_task` runs the closed loop. Success here is judged on what the
robot believes at the end; the embedded episode judges again on the world's true state.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from conceptagent_ros.errors import InstructionError, PDDLError, TaskFileError
from conceptagent_ros.llm.spec import LLMSpec, parse_llm_spec
from conceptagent_ros.planning.agent import Agent, AgentConfig, EpisodeStats, StepReport
from conceptagent_ros.planning.free_text.known import KnownObject
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.goal_check import impossible_atoms, kinds_with_nothing
from conceptagent_ros.planning.instruction import clean_instruction, interpret_instruction
from conceptagent_ros.planning.pddl.domain import PDDLDomain, cached_domain
from conceptagent_ros.planning.planners import PlannerSpec, build_planner
from conceptagent_ros.planning.planners.registry import BuiltPlanner
from conceptagent_ros.planning.robot import RobotInterface
from conceptagent_ros.planning.trace import TraceWriter
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.model import RobotState, Room
from conceptagent_ros.scene.symbolic import load_predicates, predicates_by_name
from conceptagent_ros.skills.contract import SkillLibrary, load_skill_library

ROOM_TYPE = "room"


@dataclass(frozen=True)
class TaskRequest:
    instruction: str
    goal: str | None = None  # PDDL; None: interpreted from the instruction
    planner: str = "react"
    llm: str | LLMSpec = "offline"  # parsed once where it enters (evaluation/episode.py parses it before the world is made)
    seed: int = 0
    max_steps: int = 40
    task_id: str = ""
    preconditions: Mapping[str, str] | None = None  # override the hand-written ones (e.g. generated)


@dataclass(frozen=True)
class TaskMap:
    """What the robot knows before it looks: the map's rooms and the categories its perception names."""

    rooms: Mapping[str, Room]
    vocabulary: frozenset[str]
    known_types: Mapping[str, str] = field(default_factory=dict)  # object id -> category, for goal constants
    known_affordances: Mapping[str, frozenset[str]] = field(default_factory=dict)  # object id -> affordances
    known_attributes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # object id -> {"colour": "red"}
    # A robot that has not seen everything yet (the ROS planner node): a goal may name an object it
    # has not seen by the id its perception will give it, `<category>_<n>` (apple_2), and the goal
    # is typed by that name. The embedded world knows every object, so there an unknown id is refused.
    unseen_ids_by_name: bool = False
    # Where the known objects are (room, receptacle, position, state), for instructions that say which
    # one by where it is ("the bathroom sink", "the pillow on the sofa"): what the map knows now.
    known_places: Mapping[str, KnownObject] = field(default_factory=dict)

    def category_affordances(self) -> dict[str, frozenset[str]]:
        """What each category affords: the defaults, widened by what known objects of it afford."""
        result = {c: frozenset(d.get("affordances", [])) for c, d in category_defaults().items()}
        for oid, affordances in self.known_affordances.items():
            category = self.known_types.get(oid)
            if category is not None:
                result[category] = result.get(category, frozenset()) | affordances
        return result

    def domain_types(self) -> set[str]:
        return set(category_defaults()) | set(self.vocabulary) | {ROOM_TYPE}

    def goal_types(self, goal_text: str | None = None) -> dict[str, str]:
        """Object id -> type for parsing goals; with `unseen_ids_by_name`, also the goal's own
        constants not seen yet whose names say a category of the vocabulary."""
        types = {rid: ROOM_TYPE for rid in self.rooms}
        types.update(self.known_types)
        if self.unseen_ids_by_name and goal_text:
            for name in _GOAL_CONSTANT.findall(goal_text.lower()):
                category = _ID_WITH_COUNTER.fullmatch(name)
                if name not in types and category and category.group(1) in self.vocabulary:
                    types[name] = category.group(1)
        return types


_GOAL_CONSTANT = re.compile(r"(?<![?\w-])[a-z][a-z0-9_-]*")  # names, not ?variables
_ID_WITH_COUNTER = re.compile(r"([a-z][a-z0-9_]*?)_\d+")


@dataclass
class PreparedTask:
    request: TaskRequest
    instruction: str
    goal: Goal
    domain: PDDLDomain
    verifier: PreconditionVerifier
    planner: PlannerSpec
    llm: LLMSpec
    built: BuiltPlanner
    skills: SkillLibrary
    rooms: Mapping[str, Room]


@dataclass
class TaskOutcome:
    goal: Goal
    stats: EpisodeStats
    believed_success: bool  # the agent declared done and the goal holds in its scene graph
    believed_unmet: list[str]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_seconds: float
    planner_counters: dict[str, float]


def resolve_goal(instruction: str, goal_text: str | None, domain: PDDLDomain, task_map: TaskMap,
                 llm: LLMSpec | None = None) -> Goal:
    """The given goal; else the no-model translator's reading of the instruction (planning/free_text/);
    where it refuses it and a real language model is configured, the model's
    (planning/goal_translation.py)."""
    types = task_map.goal_types(goal_text)
    if goal_text:
        text = goal_text
    else:
        try:
            text = interpret_instruction(instruction, set(domain.types) | {ROOM_TYPE}, types,
                                         task_map.known_attributes, task_map.known_places,
                                         {rid: room.category for rid, room in task_map.rooms.items()},
                                         complete=not task_map.unseen_ids_by_name)
        except InstructionError:
            if llm is None or not llm.chat:
                raise
            from conceptagent_ros.llm.chat_factory import open_chat_model
            from conceptagent_ros.planning.goal_translation import translate_goal

            objects = {oid: kind for oid, kind in task_map.known_types.items()}
            return translate_goal(instruction, open_chat_model(llm), domain, load_predicates(),
                                  objects, types)
    try:
        return Goal.parse(domain, text, types)
    except PDDLError as e:
        raise TaskFileError(f"the goal {text!r} does not parse over the known objects and categories: {e}") from e


def prepare_task(request: TaskRequest, task_map: TaskMap, skills: SkillLibrary | None = None) -> PreparedTask:
    """Check every input and build the planner; raises ConceptAgentError with a one-line reason."""
    instruction = clean_instruction(request.instruction)
    planner_spec = PlannerSpec.parse(request.planner)
    llm = request.llm if isinstance(request.llm, LLMSpec) else parse_llm_spec(request.llm)
    skills = skills or load_skill_library()
    domain = cached_domain(load_predicates(), skills, task_map.domain_types(), request.preconditions)
    goal = resolve_goal(instruction, request.goal, domain, task_map, llm)
    impossible = impossible_atoms(goal, predicates_by_name(), task_map.known_affordances,
                                  task_map.category_affordances(), task_map.known_types)
    if impossible:
        raise TaskFileError(f"the goal {goal.text} can never hold: {impossible[0]}")
    if not task_map.unseen_ids_by_name:  # every object known: a kind with none can never be had
        absent = kinds_with_nothing(goal, {**task_map.known_types, **{r: ROOM_TYPE for r in task_map.rooms}})
        if absent:
            raise TaskFileError(f"the goal {goal.text} can never hold: there is no {absent[0].replace('_', ' ')} here")
    verifier = PreconditionVerifier(domain, skills)
    built = build_planner(planner_spec, llm, domain, skills, request.seed, request.task_id)
    return PreparedTask(request, instruction, goal, domain, verifier, planner_spec, llm, built, skills,
                        dict(task_map.rooms))


def run_task(
    task: PreparedTask,
    robot: RobotInterface,
    start: RobotState,
    on_step: Callable[[StepReport], None] | None = None,
    cancel: threading.Event | None = None,
    trace: str | Path | None = None,
) -> TaskOutcome:
    graph = SceneGraph(task.rooms, start)
    # `done` is checked against the goal like any other action's preconditions: where grounding is on.
    config = AgentConfig(max_steps=task.request.max_steps, precondition_grounding=task.built.grounding,
                         check_done=task.built.grounding)
    writer = TraceWriter(trace) if trace else None
    proposer = task.built.proposer
    try:
        agent = Agent(proposer, task.verifier, task.skills, robot, graph, config, writer, on_step, cancel)
        stats = agent.run(task.instruction, task.goal)
    finally:
        if writer is not None:
            writer.close()
    belief = graph.symbolic_state()
    return TaskOutcome(
        goal=task.goal, stats=stats, believed_success=stats.declared_done and task.goal.holds(belief),
        believed_unmet=task.goal.unmet(belief), llm_calls=proposer.usage.calls,
        prompt_tokens=proposer.usage.prompt_tokens, completion_tokens=proposer.usage.completion_tokens,
        llm_seconds=proposer.usage.seconds,
        planner_counters=dict(getattr(getattr(proposer, "counters", None), "values", {})),
    )

