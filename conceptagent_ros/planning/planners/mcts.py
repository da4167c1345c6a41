"""LLM-guided Monte Carlo tree search with self-critique (ConceptAgent, section III-B).

- Selection: PUCT (beyond the paper, `prior` on: the registry's default where grounding is on),
  Q(s,a) + c * P(s,a) * sqrt(N(s)) / (1 + N(s,a)), P from the model's ranking of its proposals
  (1 / (1 + rank), normalized over the siblings). With `prior` off, the paper's UCB1,
  Q(s,a) + c * sqrt(ln N(s) / N(s,a)), unvisited children first.
- Expansion: the LLM proposes k plausible next actions after the node's planned path.
- Simulation: replaced by the LLM critic, which scores the whole planned path (0..1).
- Backpropagation: every node on the path accumulates the score; its value is the mean.
The budget counts expansions (LLM expansion calls), as the paper's 5 / 10 / 20.

Beyond the paper, with `prune` on: each proposed child is checked against the skills'
preconditions in the state its path predicts (declared effects applied). Infeasible children are
never added, so no expansion or critique is spent on them. What the check says is not thrown away:
the grounded iterative agent learns from a refusal because it reads the unsatisfied preconditions in
its history, and the search gives the model the same feedback. When the LLM's first choice for a
node is refused, the refusal becomes a feedback record ("refused during search after N planned
steps: (open drawer_1) does not hold"; the alternatives' refusals are left out, they would crowd it
out), the model is asked again at once, and the most recent records (MAX_REFUSALS, within the
agent's history window) are appended to the history that every later expansion prompt and every
critique reads, at this decision and the next ones.
After a skill fails, its call is remembered with the state it failed in: a path that tries it again
from that same state has its critic score scaled by FAILED_DISCOUNT, so the search does not rank
the failed action first again on the model's say-so alone. And a path that leads back to a state
the robot was in at one of its recent decisions or is in now (put the tomato down, pick it up again;
drive to where it stands) makes no progress: with pruning on, its score is scaled by
REVISIT_DISCOUNT (the traces of the realistic profile showed agents cycling so while a wrong belief
came and went).

Between decisions the tree is kept: after the chosen action runs, the child becomes the new root
if the observation agrees with what its effects predicted and shows no new objects (new objects
make the tree's proposals and scores stale, so the search starts afresh), and its subtree is re-predicted from
the observed state. The reused subtree keeps its proposals (saving expansion calls) but not its
statistics: the critic's scores were relative to the old history, so they are estimated anew.
The reused root is widened with one fresh expansion from the new observation
(objects just seen may offer better actions), which counts against the budget.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from conceptagent_ros.planning.choices import DriveUse, Visited, grounded_choices
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.plan_view import PlanNode, tree
from conceptagent_ros.planning.planners.base import PlannerCounters, UsageMark
from conceptagent_ros.planning.proposal import DecisionContext, Proposal, StepRecord
from conceptagent_ros.planning.roles import PlannerLLM
from conceptagent_ros.planning.verifier import PreconditionVerifier, check_call
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall

MAX_REFUSALS = 4  # search refusals shown to the model, most recent first to go
REFUSAL_WINDOW = 12  # decisions a refusal stays in view (the agent's own history window)
FAILED_DISCOUNT = 0.5  # the critic's score of a path that retries a failed call in the state it failed in
REVISIT_DISCOUNT = 0.5  # the critic's score of a path through a state of a recent decision


@dataclass(frozen=True)
class MCTSConfig:
    expansions: int = 5  # LLM expansion calls per decision
    branching: int = 3  # k: actions asked for per expansion
    exploration: float = 1.0  # c in UCB1 (scores are in 0..1)
    max_depth: int = 8
    prune: bool = True  # precondition checks inside the tree
    reuse: bool = True  # keep the consistent subtree between decisions
    # PUCT with the model's ranking as the prior (AlphaZero's selection rule, as LLM-MCTS uses the model
    # as a policy) instead of UCB1: the model's first choice is explored first and kept unless the
    # critic scores another clearly higher; off: the paper's UCB1 (docs/benchmarks/mcts_prior)
    prior: bool = True


@dataclass(eq=False)
class Node:
    call: SkillCall | None  # None at the root
    state: SymbolicState  # predicted state after `call` (the observed state at the root)
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    visits: int = 0
    value_sum: float = 0.0
    expanded: bool = False
    score: float | None = None  # the critic's score of this node's path, once asked
    pruned: dict[str, str] = field(default_factory=dict)  # refused child -> why
    prior: float = 1.0  # the model's preference: 1 / (1 + its rank among the proposals that brought it)

    @property
    def value(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0

    @property
    def terminal(self) -> bool:
        return self.call is not None and self.call.skill == "done"

    @property
    def depth(self) -> int:  # 0 at the root
        return 0 if self.parent is None else self.parent.depth + 1

    def path(self) -> list[SkillCall]:
        node: Node | None = self
        calls: list[SkillCall] = []
        while node is not None and node.parent is not None and node.call is not None:  # a reused root keeps its call
            calls.append(node.call)
            node = node.parent
        return calls[::-1]

    def size(self) -> int:
        return 1 + sum(c.size() for c in self.children)


def ucb1(child: Node, parent_visits: int, exploration: float) -> float:
    if child.visits == 0:
        return math.inf
    return child.value + exploration * math.sqrt(math.log(max(1, parent_visits)) / child.visits)


def puct(child: Node, parent_visits: int, exploration: float, total_prior: float) -> float:
    """Q + c * P * sqrt(N) / (1 + n), P the child's prior normalized over its siblings."""
    return child.value + exploration * child.prior / total_prior * math.sqrt(max(1, parent_visits)) / (1 + child.visits)


def backpropagate(node: Node | None, score: float) -> None:
    while node is not None:
        node.visits += 1
        node.value_sum += score
        node = node.parent


def best_child(node: Node) -> Node | None:
    """The most visited child; the higher mean value breaks ties."""
    return max(node.children, key=lambda c: (c.visits, c.value), default=None)


class MCTSPlanner:
    def __init__(self, llm: PlannerLLM, verifier: PreconditionVerifier, effects: EffectModel,
                 config: MCTSConfig = MCTSConfig(), name: str = "mcts"):
        self.llm = llm
        self.verifier = verifier
        self.effects = effects
        self.config = config
        self.name = name
        self.usage = llm.usage
        self.counters = PlannerCounters()
        self.root: Node | None = None
        self._chosen: Node | None = None
        self.refusals: dict[str, StepRecord] = {}  # call -> the feedback record of its latest refusal
        self.failed: dict[SkillCall, set[frozenset]] = {}  # call -> the atoms of the states it failed in
        self.visited: dict[frozenset, int] = {}  # the atoms of the recent and present decisions' states -> step
        self._step = 0
        self._drive_use: DriveUse | None = None  # built on the first expansion below the root that offers calls

    # -- one decision -----------------------------------------------------------------------------
    def plan_view(self) -> PlanNode | None:
        """The search tree from the current root, children by visits; the chosen path is best_child's."""
        if self.root is None:
            return None
        return tree(
            self.root, lambda n: n.children,
            lambda n, on_path: PlanNode(str(n.call) if n.call is not None and n is not self.root else "now", on_path,
                                        n.visits, n.value if n.visits else None),
            rank=lambda n: (n.visits, n.value), best=best_child,
        )

    def propose(self, context: DecisionContext) -> Proposal:
        mark = UsageMark.now(self.usage)
        self._step = context.step
        self._remember_failure(context)
        self.refusals = {k: r for k, r in self.refusals.items() if r.step > context.step - REFUSAL_WINDOW}
        self.visited = {atoms: step for atoms, step in self.visited.items() if step > context.step - REFUSAL_WINDOW}
        self.visited[context.state.atoms] = context.step  # the root's state: a no-op path comes back to it
        root = self._root_for(context)
        expansions, iterations = 0, 0
        if root.expanded:  # a reused root: widen it with proposals from the new observation
            self._expand(root, context)
            expansions = 1
        while expansions < self.config.expansions and iterations < 4 * self.config.expansions + 4:
            iterations += 1
            expansions += self._iterate(root, context)
            if root.expanded and not root.children:
                break  # nothing feasible to do from here: no budget left to spend usefully
        self.counters.add("decisions")
        self.counters.add("iterations", iterations)
        self.counters.add("expansions", expansions)
        refused_count = sum(len(n.pruned) for n in _walk(root))
        self.counters.add("pruned", refused_count)
        chosen = best_child(root)
        self._chosen = chosen
        if chosen is None or chosen.call is None:
            refused = next(iter(root.pruned.items()), None)
            if refused is not None:  # let the agent's verifier give the feedback for the best refused one
                return mark.proposal(SkillCall.parse(refused[0]), raw="every candidate was refused in the search",
                                     thought=f"refused: {refused[1]}")
            return mark.proposal(None, error="the search found no action to propose")
        plan = [chosen.call]
        node = chosen
        while (node := best_child(node)) is not None and node.call is not None:  # type: ignore[assignment]
            plan.append(node.call)
        note = (f"{iterations} iterations, {expansions} expansions, tree {root.size()} nodes, "
                f"{refused_count} refused; value {chosen.value:.2f} over {chosen.visits} visits")
        # what the search weighed at the root, for the trace: each candidate, its value and visits
        weighed = "; ".join(f"{c.call} {c.value:.2f}/{c.visits}" for c in root.children)
        return mark.proposal(chosen.call, raw="best plan: " + " -> ".join(map(str, plan)) + f" (weighed: {weighed})",
                             thought=note)

    def _iterate(self, root: Node, context: DecisionContext) -> int:
        """One selection-expansion-critique-backpropagation pass; returns expansions spent (0 or 1)."""
        node = root
        while node.expanded and node.children and not node.terminal:
            node = self._select(node)
            if node.visits == 0:
                break
        if node is not root and node.visits == 0:
            backpropagate(node, self._score(node, context))
            return 0
        if node.terminal or node.depth >= self.config.max_depth or node.expanded:
            backpropagate(node, node.score if node.score is not None else 0.0)  # dead end or leaf: no new call
            return 0
        self._expand(node, context)
        if node.children:
            child = node.children[0]
            backpropagate(child, self._score(child, context))
        else:
            backpropagate(node, 0.0)
        return 1

    def _select(self, node: Node) -> Node:
        c = self.config.exploration
        if self.config.prior:
            total = sum(child.prior for child in node.children)
            return max(node.children, key=lambda child: puct(child, node.visits, c, total))
        return max(node.children, key=lambda child: ucb1(child, node.visits, c))

    def _score(self, node: Node, context: DecisionContext) -> float:
        if node.score is None:
            # with grounding on, the critic is told what the plan would leave to do (node.state)
            predicted = node.state if self.config.prune else None
            node.score = self.llm.critique(self._informed(context), node.path(), predicted).score
            if self._retries_a_failure(node):
                node.score *= FAILED_DISCOUNT
            # predicted states know preconditions (an infeasible call changes nothing), so only the
            # grounded search reads them: the arm without grounding has no precondition knowledge
            if self.config.prune and self._revisits(node):
                node.score *= REVISIT_DISCOUNT
        return node.score

    def _informed(self, context: DecisionContext) -> DecisionContext:
        """The context as the model is asked in the search: the agent's history and, after it, the
        most recent refusals met in the tree (their unsatisfied preconditions named)."""
        if not self.refusals:
            return context
        recent = list(self.refusals.values())[-MAX_REFUSALS:]  # kept in the order they were last refused
        return replace(context, history=context.history + tuple(recent))

    def _expand(self, node: Node, context: DecisionContext) -> None:
        node.expanded = True
        planned = node.path()
        asked = self._informed(self._expansion_context(node, context))
        candidates = self.llm.propose_actions(asked, self.config.branching, planned).calls
        self._add_children(node, candidates)
        if self.config.prune and candidates and str(candidates[0]) in node.pruned:
            # The LLM's first choice was refused: it goes into the feedback (the alternatives' refusals
            # would crowd it out), and the model is asked once more
            self._remember_refusal(node, candidates[0], node.pruned[str(candidates[0])])
            self._add_children(node, self.llm.propose_actions(self._informed(self._expansion_context(node, context)),
                                                              self.config.branching, planned).calls)

    def _expansion_context(self, node: Node, context: DecisionContext) -> DecisionContext:
        """What a node's expansion may propose, with grounding on: at the root, the agent's own offer
        (DecisionContext.choices); below it, the calls feasible in the state the planned steps predict
        that change something there and lead to no state of the path or of a recent decision
        (planning/choices.py), so that a proposer decoding under a schema picks among what can run
        after the path, as react picks among what can run now. Without grounding, or where nothing is
        offered, the context as it is."""
        if not self.config.prune or node.parent is None or context.offer is None:
            return context
        state = node.state

        def offer() -> tuple[SkillCall, ...] | None:  # worked out only where the proposer reads it
            if context.choices is None:
                return None  # the agent offers nothing (grounding off)
            goal = context.goal
            if goal is not None and not goal.unmet(state):
                return (SkillCall("done"),)  # as the agent offers: once the goal holds, only done()
            if self._drive_use is None:
                self._drive_use = DriveUse(self.verifier.is_feasible,
                                           [(s.name, s.arity) for s in self.verifier.skills])
            feasible = [c for c in self.verifier.feasible_calls(state) if c.skill != "done" or goal is None]
            # not back to a state of a recent decision or of the path here (a drive back and forth)
            seen = Visited([*self.visited, *(n.state.atoms for n in _ancestors(node))])
            return grounded_choices(feasible, state, self.effects, visited=seen, drive_use=self._drive_use,
                                    goal_objects=goal.things(state) if goal is not None else ()) or None
        return replace(context, offer=offer)

    # -- what the search learns from refusals and failures ------------------------------------------
    def _remember_refusal(self, node: Node, call: SkillCall, why: str) -> None:
        self.refusals.pop(str(call), None)  # the latest refusal of a call is the one kept, last in line
        self.refusals[str(call)] = StepRecord(
            self._step, call, False, False, f"refused during search after {node.depth} planned step(s): {why}",
            "blocked")

    def _remember_failure(self, context: DecisionContext) -> None:
        """The last executed call failed: remember it with the state the agent saw it fail in (the
        observed state of the decision that chose it, which is the root this search starts from
        when nothing changed)."""
        last = context.history[-1] if context.history else None
        if last is not None and last.executed and not last.success and last.call is not None and self.root is not None:
            self.failed.setdefault(last.call, set()).add(self.root.state.atoms)

    def _revisits(self, node: Node) -> bool:
        """Does the path pass through a state of a recent decision, the present one included (an
        action that changes nothing, as driving to where the robot already stands, is no progress
        either)? `done` changes nothing by design and is judged by the critic alone."""
        if node.terminal:
            return False
        while node.parent is not None:  # the root's own state is in `visited`: it is the present one
            if node.state.atoms in self.visited:
                return True
            node = node.parent
        return False

    def _retries_a_failure(self, node: Node) -> bool:
        while node.parent is not None and node.call is not None:
            if node.parent.state.atoms in self.failed.get(node.call, ()):
                return True
            node = node.parent
        return False

    def _add_children(self, node: Node, candidates: tuple[SkillCall, ...]) -> None:
        existing = {c.call for c in node.children}
        for rank, call in enumerate(candidates):
            if call in existing or str(call) in node.pruned:
                continue
            if call.skill == "done":
                node.children.append(Node(call, node.state, node, prior=1 / (1 + rank)))
                continue
            if self.config.prune:
                problem = check_call(call, self.verifier.skills, node.state)
                if problem is None and not self.verifier.is_feasible(call, node.state):
                    problem = self.verifier.verify(call, node.state).feedback()
                if problem is not None:
                    node.pruned[str(call)] = problem
                    continue
            state = self.effects.apply(call, node.state) if self.verifier.is_feasible(call, node.state) else node.state
            node.children.append(Node(call, state, node, prior=1 / (1 + rank)))
            existing.add(call)

    # -- reuse between decisions ------------------------------------------------------------------
    def _root_for(self, context: DecisionContext) -> Node:
        chosen, last = self._chosen, (context.history[-1] if context.history else None)
        self._chosen = None
        if (self.config.reuse and chosen is not None and chosen.parent is not None and last is not None
                and last.executed and last.success and last.call == chosen.call
                and set(context.state.types) == set(chosen.parent.state.types)
                and _consistent(chosen.parent.state, chosen.state, context.state)):
            chosen.parent = None
            chosen.state = context.state
            self._repredict(chosen)
            for node in _walk(chosen):  # scores were relative to the old history: re-estimate them
                node.visits, node.value_sum, node.score = 0, 0.0, None
            self.counters.add("reused_nodes", chosen.size() - 1)
            self.root = chosen
            return chosen
        self.root = Node(None, context.state)
        return self.root

    def _repredict(self, node: Node) -> None:
        kept = []
        for child in node.children:
            assert child.call is not None
            feasible = child.call.skill == "done" or self.verifier.is_feasible(child.call, node.state)
            if self.config.prune and not feasible:
                node.pruned[str(child.call)] = "no longer feasible in the observed state"
                continue
            child.state = self.effects.apply(child.call, node.state) if feasible else node.state
            self._repredict(child)
            kept.append(child)
        node.children = kept


# Reach is geometry: navigating predicts `near` for the target and its contents only, while the
# robot may in fact end up within reach of neighbours too. Such atoms do not refute a prediction.
GEOMETRIC_PREDICATES = frozenset({"near"})


def _consistent(before: SymbolicState, predicted: SymbolicState, observed: SymbolicState) -> bool:
    """Did the observation bear out the predicted change?"""
    added = predicted.atoms - before.atoms
    removed = {a for a in before.atoms - predicted.atoms if a[0] not in GEOMETRIC_PREDICATES}
    return added <= observed.atoms and not (removed & observed.atoms)


def _walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out


def _ancestors(node: Node) -> list[Node]:
    """The nodes above `node`, its parent first, up to the root."""
    above = []
    while node.parent is not None:
        node = node.parent
        above.append(node)
    return above
