"""The VoxPoser templates through the trajectory node's action, as a user's client would drive it.

The node runs in a child process (its own DDS participant, a reserved ROS_DOMAIN_ID). For every
episode this client sets the node's sim.template and sim.seed through its parameter service, sends
the template's instruction as a SynthesizeTrajectory goal and reads the verdict from the result:
the node's simulated arm runs the template's judge, which reads PyBullet's ground truth only.

    conceptagent ros voxposer-bench [--seeds N] [--template N ...] [--unseen] [--out DIR]
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient

from conceptagent_ros.action import SynthesizeTrajectory
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.voxposer_bench import Judged, run_templates, write_bench_files
from conceptagent_ros.ros.action_client import ActionClient
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.ros.graph_process import isolated_domain, running
from conceptagent_ros.voxposer.task_templates import TEMPLATES, TabletopTask

Result = SynthesizeTrajectory.Result


class NodeBench:
    """A client of one voxposer node: set the scene, send the instruction, read the judge."""

    def __init__(self, node: Any, server_wait: float = 60.0) -> None:
        self.node = node
        self.parameters = AsyncParameterClient(node, "voxposer")
        self.action = ActionClient(node, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
        if not self.action.wait_for_server(timeout_sec=server_wait) or \
                not self.parameters.wait_for_services(timeout_sec=server_wait):
            raise ConceptAgentError(f"no voxposer node answered in {server_wait:.0f} s "
                                    f"(namespace {node.get_namespace()!r})")

    def episode(self, template: int, seed: int, instruction: str, timeout: float) -> Any:
        """One goal on template `template` (1-based) with `seed`; the action's result."""
        setting = self.parameters.set_parameters([Parameter("sim.template", value=template),
                                                  Parameter("sim.seed", value=seed)])
        if not wait_done(setting, 10.0) or not all(r.successful for r in setting.result().results):
            raise ConceptAgentError(f"the node refused sim.template={template} sim.seed={seed}")
        answer = self.action.send_goal_reliably(SynthesizeTrajectory.Goal(instruction=instruction), timeout=10.0)
        if answer.handle is None:
            raise ConceptAgentError(f"the node {answer.why_text()} the goal (busy with another?)")
        ended = self.action.get_result_reliably(answer.handle, timeout=timeout)
        if ended.response is None:
            answer.handle.cancel_goal_async()
            raise ConceptAgentError(f"'{instruction}' did not end within {timeout:.0f} s ({ended.why}); canceled")
        return ended.response.result

    def close(self) -> None:
        self.action.destroy()


def run_bench(bench: NodeBench, templates: list[int], episodes: int, seen: bool, timeout: float,
              out: TextIO = sys.stdout) -> tuple[dict[int, tuple[int, int]], list[dict[str, object]]]:
    """Success per template (0-based indices) over `episodes` seeded episodes each, through the action."""
    def run_one(index: int, seed: int, task: TabletopTask) -> Judged:
        result = bench.episode(index + 1, seed, task.instruction, timeout)
        if result.judge == Result.JUDGE_NONE:
            raise ConceptAgentError(f"the node did not judge '{task.instruction}' (is its arm 'sim'?)")
        return Judged(result.judge == Result.JUDGE_PASSED, result.success, int(result.replans),
                      float(result.replan_hz), result.judge_verdict if result.success else result.error_msg)
    return run_templates(templates, episodes, seen, run_one, out)


def node_command(namespace: str, llm: str) -> list[str]:
    return [sys.executable, "-m", "conceptagent_ros.ros.voxposer_node", "--ros-args", "-r", f"__ns:=/{namespace}",
            "-p", "arm:=sim", "-p", f"llm:={llm}", "-p", "maps.publish:=false"]


def run_voxposer_node_bench(args: Any) -> int:
    """`conceptagent ros voxposer-bench`: the node in a child process on a domain of its own."""
    templates = [t - 1 for t in args.template] if args.template else list(range(len(TEMPLATES)))
    if any(not 0 <= t < len(TEMPLATES) for t in templates):
        raise ConceptAgentError(f"--template must be 1..{len(TEMPLATES)}")
    namespace = args.namespace.strip("/")
    with isolated_domain() as domain:
        command = node_command(namespace, args.llm)
        print(f"Starting the voxposer node (ROS_DOMAIN_ID={domain}): {' '.join(command[2:])}", flush=True)
        with running([command]), ClientNode("voxposer_bench", namespace) as client:
            bench = NodeBench(client.node)
            try:
                results, rows = run_bench(bench, templates, args.seeds, not args.unseen, args.timeout)
            finally:
                bench.close()
    wins = sum(w for w, _ in results.values())
    total = sum(n for _, n in results.values())
    print(f"Through the node's action: success {wins}/{total}", flush=True)
    if args.out:
        write_bench_files(Path(args.out), results, rows, args.llm, not args.unseen, name="voxposer_node",
                          via="through the trajectory node's SynthesizeTrajectory action")
        print(f"Results written to {Path(args.out) / 'voxposer_node.md'} and "
              f"{Path(args.out) / 'voxposer_node_episodes.csv'}", flush=True)
    return 0
