"""`conceptagent ros up|send|demo|bench` and `conceptagent say`: the ROS graph from a shell, for
pip installs where `ros2 launch` and `ros2 topic pub` are not available."""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.bringup import GraphOptions, bring_up, init_context
from conceptagent_ros.ros.task_client import publish_command, send_task

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
SHUTDOWN_SECONDS = 8.0


def _graph_options(args: argparse.Namespace) -> GraphOptions:
    planner: dict[str, Any] = {}
    robot: dict[str, Any] = {}
    for key in ("planner", "llm"):
        if getattr(args, key, None):
            planner[key] = getattr(args, key)
    if getattr(args, "preempt", False):
        planner["preempt"] = True
    if getattr(args, "scene", None):
        robot["scene"] = args.scene
    if getattr(args, "skill_duration", None) is not None:
        robot["skill_duration"] = float(args.skill_duration)
    if getattr(args, "failure_rate", None):
        robot["failure_rates"] = list(args.failure_rate)
    nodes = set((getattr(args, "nodes", None) or "robot,planner").split(","))
    unknown = nodes - {"robot", "planner"}
    if unknown or not nodes:
        raise ConceptAgentError(f"--nodes takes robot, planner or both (comma-separated); got {getattr(args, 'nodes', '')!r}")
    return GraphOptions(namespace=args.namespace, params_file=getattr(args, "params", None), planner=planner, robot=robot,
                        with_robot="robot" in nodes, with_planner="planner" in nodes)


def cmd_up(args: argparse.Namespace) -> int:
    if args.params and not os.path.isfile(args.params):
        raise ConceptAgentError(f"--params {args.params}: no such file")
    graph = bring_up(_graph_options(args))
    ns = "/" + args.namespace.strip("/")
    names = " + ".join({"robot": "robot stand-in", "planner": "planner"}[n] for n in graph.nodes)
    print(f"ROS graph up in namespace {ns} (ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}): "
          f"{names}. Try:\n"
          f"  conceptagent say \"put the apple in the fridge\"\n"
          f"  conceptagent ros send \"put the apple in the fridge\"\n"
          f"Ctrl-C stops it.", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.2) and graph.alive():
            pass
    except KeyboardInterrupt:
        pass
    finally:
        # Tear down in order, but never hang on the way out: a stuck DDS thread must not keep the
        # robot's terminal (or a launch supervisor) waiting.
        closer = threading.Thread(target=graph.shutdown, daemon=True)
        closer.start()
        closer.join(SHUTDOWN_SECONDS)
        if closer.is_alive():
            print(f"conceptagent ros up: shutdown took over {SHUTDOWN_SECONDS:.0f} s; exiting anyway", file=sys.stderr,
                  flush=True)
            os._exit(EXIT_OK)
    return EXIT_OK


class _ClientNode:
    """A node of our own, spun on a thread, for the client commands."""

    def __init__(self, name: str, namespace: str):
        self.context = init_context()
        self.node = Node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)  # the commands block outside callbacks
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def close(self) -> None:
        # The spin thread must be out of rclpy before the context goes, or the process aborts at exit.
        self.executor.shutdown(timeout_sec=2.0)
        self.thread.join(timeout=2.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def printable(text: str, limit: int = 200) -> str:
    """What may reach a terminal: no escape sequences or other control characters from the input."""
    return "".join(ch if ch.isprintable() else "?" for ch in text[:limit])


def print_step(step: Any) -> None:
    call = f"{step.call.skill}({', '.join(step.call.args)})" if step.call.skill else "(unusable reply)"
    mark = ("ok " if step.success else "ERR") if step.executed else ("END" if step.success else "NO ")
    print(f"[step {step.step:>2}] {mark} {printable(call)}", flush=True)
    if not step.success:
        print(f"          {printable(step.feedback, 2000)}", flush=True)


def run_client(instruction: str, namespace: str, goal: str = "", planner: str = "", timeout: float = 600.0,
               server_wait: float = 30.0) -> int:
    client = _ClientNode("conceptagent_client", namespace)
    try:
        print(f"Sending to /{namespace.strip('/')}/execute_task: {printable(instruction)}", flush=True)
        reply = send_task(client.node, instruction, goal=goal, planner=planner, on_step=print_step,
                          server_wait=server_wait, timeout=timeout)
    finally:
        client.close()
    if not reply.accepted or reply.result is None:
        print("REJECTED: the planner is busy with another task", flush=True)
        return EXIT_FAILED
    result = reply.result
    if result.success:
        print(f"SUCCESS: {result.goal} holds after {result.steps} steps ({reply.seconds:.1f} s)", flush=True)
        return EXIT_OK
    print(f"FAILED (error {result.error_code}): {printable(result.error_msg, 2000)}", flush=True)
    return EXIT_BAD_INPUT if result.error_code == result.INVALID_INSTRUCTION else EXIT_FAILED


def cmd_send(args: argparse.Namespace) -> int:
    return run_client(args.instruction, args.namespace, args.goal or "", args.planner or "", args.timeout)


def cmd_demo(args: argparse.Namespace) -> int:
    """The graph in a child process, the client here: a real DDS hop between two processes."""
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        os.environ.update(ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        command = [sys.executable, "-m", "conceptagent_ros.cli", "ros", "up", "--namespace", args.namespace,
                   "--scene", args.scene, "--planner", args.planner, "--llm", args.llm]
        print(f"Starting the graph (ROS_DOMAIN_ID={reserved}): {' '.join(command[2:])}", flush=True)
        graph = subprocess.Popen(command, env=env)
        try:
            code = run_client(args.instruction, args.namespace, timeout=args.timeout)
        finally:
            graph.send_signal(signal.SIGINT)
            try:
                graph.wait(timeout=10)
            except subprocess.TimeoutExpired:
                graph.kill()
        return code


def cmd_say(args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    if not text.strip():
        raise ConceptAgentError("say what the robot should do, e.g. conceptagent say \"put the apple in the fridge\"")
    client = _ClientNode("conceptagent_say", args.namespace)
    try:
        receivers = publish_command(client.node, text, args.topic, wait=args.wait)
    finally:
        client.close()
    where = f"/{args.namespace.strip('/')}/{args.topic}" if not args.topic.startswith("/") else args.topic
    if receivers == 0:
        print(f"published on {where}, but nothing subscribes to it (is the planner running?)", file=sys.stderr)
        return EXIT_FAILED
    print(f"published on {where} ({receivers} subscriber{'s' if receivers != 1 else ''})")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.ros.overhead import run_overhead_benchmark

    return run_overhead_benchmark(args.scene, args.instruction, args.runs, args.round_trips)


def cmd_suite(args: argparse.Namespace) -> int:
    from pathlib import Path

    from conceptagent_ros.evaluation.tasks import load_suite, load_tasks
    from conceptagent_ros.ros.graph_suite import GraphSuiteConfig, run_graph_suite, summary_markdown, write_results

    tasks = load_tasks(args.tasks) if args.tasks else load_suite(args.suite)
    if args.task:
        unknown = sorted(set(args.task) - {t.id for t in tasks})
        if unknown:
            raise ConceptAgentError(f"no task {', '.join(unknown)} in {args.tasks or args.suite}")
        tasks = [t for t in tasks if t.id in set(args.task)]
    config = GraphSuiteConfig(perception=args.perception, detector=args.detector, planner=args.planner, llm=args.llm,
                              timeout=args.timeout, layout=args.layout)
    episodes = run_graph_suite(tasks, config)
    name = Path(args.tasks).stem if args.tasks else args.suite
    print(summary_markdown(episodes, config, name))
    if args.out:
        for path in write_results(episodes, config, name, Path(args.out)):
            print(f"wrote {path}")
    return 0 if all(e.success for e in episodes) else 1


def cmd_voxposer_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.ros.voxposer_bench import cmd_voxposer_bench as bench

    return bench(args)
