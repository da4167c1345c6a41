"""The household body seen through the perception pipeline: `run ... --body pybullet --perception
camera` (and `bench`). What the ROS graph does with the perception and scene graph nodes
(`conceptagent ros up --body pybullet`), in one process with no ROS: every image the mast camera
takes is fused into an object map (perception/pipeline.py, with the oracle detector on the
simulator's segmentation, geometry from depth: config/perception_simulated.yaml), and the planner's
observation is built from that map, the base's pose and what the robot's own skills did
(planning/robot_belief.RobotBelief, the scene graph node's logic), reach measured to the nearest point
of each thing.

The body still drives, looks for its grasps and checks its reach with its own view of what it
sees (bodies/household/body.py), as a robot's skill servers read their own sensors. A skill call names
the map's ids; they are resolved to the scene's things by where PyBullet has them
(sim/perceived_ids.py), as in the ROS graph.
"""
from __future__ import annotations

from conceptagent_ros.bodies.household.body import HouseholdBody
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.map_objects import perceived_objects
from conceptagent_ros.perception.pipeline import FramePipeline
from conceptagent_ros.planning.robot_belief import RobotBelief
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.sim.perceived_ids import PerceivedIdResolver, map_things
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

REACH = 1.0  # metres from the base to the nearest point of a thing: the scene graph node's default


class PerceivingBody:
    """RobotInterface over a HouseholdBody built with look_first=False (its first look is fused here)."""

    def __init__(self, body: HouseholdBody):
        from conceptagent_ros.paths import config_dir
        from conceptagent_ros.perception.config import build_segmenter, load_perception_spec
        from conceptagent_ros.perception.detectors.oracle import OracleDetector

        spec = load_perception_spec(config_dir() / "perception_simulated.yaml")
        scene = body.scene
        self.body = body
        self.map = ObjectMap(spec.fusion_config())
        detector = OracleDetector(lambda name: scene.objects[name].category, min_pixels=spec.detector.min_pixels)
        self.pipeline = FramePipeline(detector, self.map, build_segmenter(spec), None, spec.geometry_config(), [])
        self.belief = RobotBelief(scene.rooms, REACH, reach_to="edge")
        self.ids = PerceivedIdResolver(scene, body.positions,
                                       lambda: body.held.object_id if body.held is not None else None)
        self.vocabulary = {o.category for o in scene.objects.values()}
        self.frames = 0
        body.frame_sink = self._fuse
        body.look_around()

    def _fuse(self, frame: Frame) -> None:
        self.pipeline.process(frame)
        self.frames += 1

    def _position(self) -> tuple[float, float, float]:
        pose = self.body.base_pose()
        return pose.x, pose.y, 0.0

    def observe(self) -> Observation:
        things = map_things(self.map)
        self.ids.remember(things)
        return self.belief.observation(perceived_objects(self.map), self._position())

    def execute(self, call: SkillCall) -> SkillOutcome:
        acted = self.ids.resolve_call(call, self.ids.not_held(map_things(self.map)))
        outcome = self.body.execute(acted)  # with one more image where it left the robot, fused
        if outcome.success:
            call_here = SkillCall(call.skill, tuple(self.map.aliases.get(a, a) for a in call.args))
            for oid in self.belief.record(call_here, perceived_objects(self.map), self._position(), self.vocabulary):
                self.map.remove(oid)  # in the gripper now, not where the map saw it
        message = outcome.message if acted == call else f"{outcome.message} (as {acted})"
        return SkillOutcome(call, outcome.success, message, outcome.failure, outcome.code)
