"""The task planner's body on the physical arm: `conceptagent run ... --scene tabletop --body pybullet`.

A RobotInterface (planning/robot.py) over the PyBullet Panda at the table the scene file lays out
(bodies/tabletop/scene_layout.py). What the planner is told comes from the four RGB-D cameras: per part,
the depth pixels its segmentation mask covers (the simulator's masks, the geometry from depth), its
place from those points, what it stands in from their boxes, a drawer's opening measured from its
front's points against the most recessed front. Skills go to the manipulation package's planners
and executors on those points: pick (grasp planner, pick executor), place (place planner on the
receptacle's points, place executor), open and close (articulation planner and executor, the
result measured again from the points). A physical failure comes back as a failed skill whose
message carries the manipulation code (`pick(duck_1) failed: SLIPPED: ...`), for the planner to
act on like any other. The goal is judged by bodies/tabletop/tabletop_judge.py on PyBullet's own state.

The arm does not drive: navigate_to succeeds on anything at the table (the whole table is within
the arm's reach from its base), and skills the arm has no executor for are refused as unavailable.
"""
from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
from conceptagent_ros.bodies.tabletop.scene_layout import TabletopLayout, tabletop_layout
from conceptagent_ros.bodies.tabletop.tabletop_judge import physical_state
from conceptagent_ros.manipulation.arm_skills import SEEN_OPEN, ArmSkills, Clouds, SkilledBody, SkillWatch
from conceptagent_ros.manipulation.pick_executor import Arm
from conceptagent_ros.manipulation.robot_spec import load_robot_spec
from conceptagent_ros.perception.relations3d import smallest_holder
from conceptagent_ros.scene.model import RobotState, Scene, SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

CONTAINED_MARGIN = 0.01  # a thing's bottom may lie this far below a receptacle's lowest point and still be in it


class TabletopBody(SkilledBody):
    """RobotInterface on the physical Panda. `close()` when done (it owns two PyBullet clients)."""

    def __init__(self, scene: Scene, seed: int = 0, gui: bool = False, robot: str = "panda",
                 log: TextIO | None = None):
        self.scene = scene
        self.layout: TabletopLayout = tabletop_layout(scene, seed)
        self.spec = load_robot_spec(robot)
        self.world = GraspWorld([], seed, gui=gui, tray=self.layout.tray, cabinet=self.layout.cabinet,
                                placed=self.layout.things)
        self.state = RobotState(scene.robot.start_position, scene.robot.start_room, None, scene.robot.reach)
        self.log = log if log is not None else sys.stderr
        self.skills = ArmSkills(self, self.spec, drawers=self.layout.drawers, table=self.layout.table, floor_z=0.0)

    # -- what the skills need of the body (manipulation/arm_skills.ArmBody) ---------------------------
    def look(self) -> Clouds:
        return self.clouds()

    def hand(self) -> Arm:
        """In straight lines, in joint space where a line cannot get there."""
        return self.world.hand(joint_space_fallback=True)

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        return self.world.kinematics.reachable(position, quaternion)

    def finger_gap(self) -> float:
        return self.world.table.finger_gap()

    def settle(self) -> None:
        self.world.table.step(120)  # half a second of physics: what was let go of comes to rest

    def rest(self) -> None:
        self.world.hand().rest()


    def close(self) -> None:
        self.world.close()

    def judged_state(self) -> SymbolicState:
        """The atoms that hold in PyBullet now, by the tabletop's judge (not by what the cameras saw)."""
        return physical_state(self.world, self.layout, self.scene)

    # -- seeing ------------------------------------------------------------------------------------
    def clouds(self) -> dict[str, np.ndarray]:
        """Per scene id, the points the cameras see of it now."""
        out = {}
        for part, points in self.world.perceive().items():
            sid = self.layout.scene_id(part)
            if sid is not None and len(points):
                out[sid] = points
        return out

    def drawer_openings(self, clouds: Clouds) -> dict[str, float]:
        """Each seen drawer's opening (m), measured from its front's points -- not read from the simulator."""
        return self.skills.drawer_openings(clouds)

    def observe(self) -> Observation:
        clouds = self.clouds()
        openings = self.drawer_openings(clouds)
        boxes = {sid: (pts.min(axis=0), pts.max(axis=0)) for sid, pts in clouds.items()}
        holders = [sid for sid in boxes if self.scene.objects[sid].has("receptacle")
                   and (sid not in self.layout.drawers or openings.get(sid, 0.0) >= SEEN_OPEN)]
        objects = []
        for sid, (lo, hi) in boxes.items():
            spec = self.scene.objects[sid]
            state = dict(spec.state)
            if sid in openings:
                state["open"] = openings[sid] >= SEEN_OPEN
            held = self.held is not None and self.held.object_id == sid
            parent = None if held else self._holder(sid, boxes, holders)
            centre = (lo + hi) / 2
            objects.append(SceneObject(sid, spec.category, self.state.room, (float(centre[0]), float(centre[1]), float(hi[2])),
                                       spec.affordances, state, parent, attributes=dict(spec.attributes)))
        self.state = RobotState(self.state.position, self.state.room, self.held.object_id if self.held else None,
                                self.state.reach)
        seen_inside = tuple(sid for sid in holders if sid in boxes)
        return Observation(self.state, tuple(objects), seen_inside)

    def _holder(self, sid: str, boxes: dict[str, tuple[np.ndarray, np.ndarray]], holders: list[str]) -> str | None:
        """In the tray, in the open drawer, else on the table; a drawer is in its cabinet (the
        cabinet's make, not a thing seen)."""
        if sid in self.layout.drawers:
            return self.layout.cabinet_id
        return smallest_holder(sid, boxes, holders, CONTAINED_MARGIN)

    # -- acting ------------------------------------------------------------------------------------
    def execute(self, call: SkillCall, watch: SkillWatch | None = None) -> SkillOutcome:
        """Run one skill on the arm. With `watch`, a set cancel flag stops the arm before its next
        motion (the outcome is then "canceled") and each phase is reported as it starts."""
        unknown = [a for a in call.args if a not in self.scene.objects and a not in self.scene.rooms]
        if unknown:
            return SkillOutcome(call, False, f"{call}: unknown object {unknown[0]}", "invalid")
        if call.skill == "navigate_to":
            return SkillOutcome(call, True, f"{call}: the arm reaches the whole table from its base")
        if call.skill == "pick" and call.args and call.args[0] not in (t.name for t in self.layout.things):
            return SkillOutcome(call, False, f"{call} was refused: {call.args[0]} is not something the hand can "
                                             "pick up", "precondition")
        return self.skills.execute(call, watch, self.log)

    def stop(self) -> None:
        self.world.table.stop()  # hold where it is
