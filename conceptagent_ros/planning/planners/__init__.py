"""Every planner behind one interface (`ActionProposer`), chosen by a spec such as
`mcts:expansions=10,prune=off`. See PLANNERS for the names and `build_planner` for the options."""
from __future__ import annotations

from conceptagent_ros.planning.planners.registry import PLANNERS, BuiltPlanner, PlannerSpec, build_planner

__all__ = ["PLANNERS", "BuiltPlanner", "PlannerSpec", "build_planner"]
