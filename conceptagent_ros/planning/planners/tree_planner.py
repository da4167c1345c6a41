"""Tree-Planner (Hu et al., ICLR 2024): plan sampling, action-tree construction, grounded deciding.

1. Plan sampling: N whole plans for the task in one request (N requests where the server lacks `n`).
2. Action tree: plans merged on shared prefixes (the paper's Algorithm 1); each node is an action.
3. Grounded deciding: at the current node the LLM picks one child given the observation; a node
   with a single valid child needs no call.
4. Error correction: when the chosen action is refused or fails, its subtree is marked invalid and
   the planner backtracks to the nearest fork above with a valid child and decides there. The paper
   also executes inverse actions to restore the state; here the agent keeps the state it is in and
   the precondition check decides whether the remaining branch still applies.
When the tree is used up (no valid node left, or a leaf that is not `done`), plans are sampled
again from the current observation: that is a replan, counted apart from corrections.

Tokens are counted as the paper counts them: the prompt of plan sampling is paid once per sampling
request, and grounded deciding pays a short prompt per decision.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conceptagent_ros.planning.plan_view import PlanNode, tree
from conceptagent_ros.planning.planners.base import PlannerCounters, UsageMark
from conceptagent_ros.planning.proposal import DecisionContext, Proposal
from conceptagent_ros.planning.roles import PlannerLLM, SamplingOptions
from conceptagent_ros.skills.contract import SkillCall


@dataclass(frozen=True)
class TreePlannerConfig:
    samples: int = 10  # N plans per sampling request (the paper uses 25 and 50)
    temperature: float = 0.8
    max_replans: int = 10  # the paper's maximum number of error corrections, plus one per unexplored place


@dataclass(eq=False)
class ActionNode:
    call: SkillCall | None  # None at the root
    parent: ActionNode | None = None
    children: list[ActionNode] = field(default_factory=list)
    valid: bool = True
    support: int = 0  # how many sampled plans pass through this node

    def child(self, call: SkillCall) -> ActionNode | None:
        return next((c for c in self.children if c.call == call), None)

    def valid_children(self) -> list[ActionNode]:
        return [c for c in self.children if c.valid]

    def invalidate(self) -> None:
        """Mark this node and its whole subtree invalid."""
        self.valid = False
        for c in self.children:
            c.invalidate()

    def count(self) -> int:
        return 1 + sum(c.count() for c in self.children)


def build_action_tree(plans: Sequence[Sequence[SkillCall]]) -> ActionNode:
    """Merge plans on shared prefixes (Algorithm 1 of the paper)."""
    root = ActionNode(None)
    for plan in plans:
        node = root
        node.support += 1
        for call in plan:
            nxt = node.child(call)
            if nxt is None:
                nxt = ActionNode(call, node)
                node.children.append(nxt)
            nxt.support += 1
            node = nxt
    return root


def backtrack(node: ActionNode) -> ActionNode | None:
    """Invalidate `node`'s subtree and climb to the nearest ancestor with a valid child; ancestors
    left without one are invalidated on the way. None: the whole tree is used up."""
    node.invalidate()
    parent = node.parent
    while parent is not None:
        if parent.valid_children():
            return parent
        if parent.parent is None:
            return None
        parent.valid = False
        parent = parent.parent
    return None


class TreePlanner:
    def __init__(self, llm: PlannerLLM, config: TreePlannerConfig = TreePlannerConfig(), name: str = "tree-planner"):
        self.llm = llm
        self.config = config
        self.name = name
        self.usage = llm.usage
        self.counters = PlannerCounters()
        self.root: ActionNode | None = None
        self.current: ActionNode | None = None  # the node whose action ran last (or the root)
        self._pending: ActionNode | None = None  # the node proposed last
        self._feedback = ""

    def plan_view(self) -> PlanNode | None:
        """The action tree below the node that ran last; invalidated branches stay, marked invalid."""
        if self.current is None:
            return None
        here = self.current

        def best(node: ActionNode) -> ActionNode | None:
            valid = node.valid_children()
            return max(valid, key=lambda c: c.support) if valid else None

        return tree(
            here, lambda n: n.children,
            lambda n, on_path: PlanNode(str(n.call) if n.call is not None and n is not here else "now",
                                        on_path and n.valid, n.support, None, n.valid),
            rank=lambda n: (n.valid, n.support), best=best,
        )

    def propose(self, context: DecisionContext) -> Proposal:
        mark = UsageMark.now(self.usage)
        self._observe_outcome(context)
        if self.current is None or not self.current.valid_children():
            # The limit grows with what is still unexplored: an object hidden two containers deep
            # legitimately needs a re-plan per container opened.
            limit = self.config.max_replans + context.graph.frontier_size()
            if self.counters.values.get("samplings", 0) > limit:
                return mark.proposal(SkillCall("done"), raw=f"giving up: {limit} replans and nothing left to explore")
            error = self._sample(context)
            if self.current is None:
                return mark.proposal(None, error=error or "no plan could be sampled")
        assert self.current is not None
        options = self.current.valid_children()
        if len(options) == 1:
            chosen = options[0]
        else:
            self.counters.add("decisions_asked")
            answer = self.llm.choose(context, [c.call for c in options if c.call is not None])
            chosen = options[answer.index] if answer.index is not None else max(options, key=lambda c: c.support)
        self._pending = chosen
        assert chosen.call is not None
        return mark.proposal(chosen.call, raw=f"tree node with {len(options)} option(s)",
                             thought=f"tree of {self.root.count() if self.root else 0} nodes")

    def _observe_outcome(self, context: DecisionContext) -> None:
        pending, last = self._pending, (context.history[-1] if context.history else None)
        self._pending = None
        if pending is None or last is None or last.call != pending.call:
            return
        if last.success and last.executed:
            self.current = pending
            return
        # Error correction: the chosen node's subtree is invalid; decide again at the nearest fork.
        self.counters.add("corrections")
        self._feedback = f"{last.call} failed: {last.feedback[:300]}"
        fork = backtrack(pending)
        self.current = fork  # None: the tree is used up, sample again

    def _sample(self, context: DecisionContext) -> str | None:
        self.counters.add("samplings")
        options = SamplingOptions(n=self.config.samples, temperature=self.config.temperature,
                                  feedback=self._feedback)
        samples = self.llm.sample_plans(context, options)
        if not samples.plans:
            self.current = None
            return "; ".join(samples.errors) or "no plan in the samples"
        self.root = build_action_tree(samples.plans)
        self.current = self.root
        self.counters.add("tree_nodes", self.root.count() - 1)
        return None
