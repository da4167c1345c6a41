"""What ROS costs: the same task embedded and through the ROS graph, and one skill over DDS.

`conceptagent ros bench` runs the task with the offline planner (1) in one process on the embedded
world and (2) through the graph as ros2 launch runs it, one process per node: the robot stand-in
and the planner in child processes, an ExecuteTask goal sent from this one. The planner observes
through the scene graph topic and acts through ExecuteSkill actions. It prints per-step and total
times and their ratio, then ExecuteSkill and GetSceneGraph round trips from this process to the
stand-in, median and p99.

What ROS adds to a step is measured on the agent's acting time: everything outside the proposer
(verifying, executing the skill, observing, publishing steps and feedback), which both runs report
(EpisodeStats, ExecuteTask.Result). The planning time between them is the offline planner's Fast
Downward subprocess, the same work on both sides; on a 2-core machine shared with three ROS
processes its jitter (tens of ms per step) would otherwise drown the few ms being measured. The
end-to-end totals are printed beside it. Exit 1 when ROS adds more than 10 ms per step at the median.
"""
from __future__ import annotations

import signal
import statistics
import threading
import time
from dataclasses import dataclass

from rclpy.node import Node
from std_srvs.srv import Trigger

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.msg import SkillCall
from conceptagent_ros.ros.action_client import ActionClient
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.graph_process import graph_command, isolated_domain, running
from conceptagent_ros.ros.task_client import send_task
from conceptagent_ros.srv import GetSceneGraph

BAR_MS_PER_STEP = 10.0
AIM_MS_PER_STEP = 2.0


@dataclass(frozen=True)
class Run:
    total: float  # seconds, the whole task
    acting: float  # seconds outside the proposer
    steps: int


def _wait(future, timeout: float = 10.0):  # noqa: ANN001, ANN202
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout):
        raise TimeoutError("no answer over DDS within 10 s")
    return future.result()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100.0 * (len(ordered) - 1)))))
    return ordered[index]


def run_overhead_benchmark(scene: str, instruction: str, runs: int, round_trips: int) -> int:
    print(f"Task: {instruction!r} on {scene}, offline planner, {runs} runs each way; the graph runs one process "
          "per node (robot stand-in, planner), the client in this one", flush=True)
    run_episode(EpisodeSpec.of(instruction, scene=scene))  # warm caches (PDDL domain, planner)
    with isolated_domain():
        up = graph_command("ros", "up", "--scene", scene, "--nodes")
        # SIGTERM: `ros up` stops its graph on it as on Ctrl-C
        with running([[*up, "robot"], [*up, "planner"]], quiet=True, signum=signal.SIGTERM), \
                ClientNode("bench_client", "conceptagent") as bench_client:
            client = bench_client.node
            reset = client.create_client(Trigger, "reset")
            if not reset.wait_for_service(timeout_sec=30.0):
                print("the robot stand-in did not come up within 30 s")
                return 1
            embedded: list[Run] = []
            ros: list[Run] = []
            for i in range(runs + 1):  # interleaved, so drift hits both; run 0 warms DDS discovery
                started = time.perf_counter()  # the whole task, setup included, as the client times it
                result = run_episode(EpisodeSpec.of(instruction, scene=scene))
                embedded_seconds = time.perf_counter() - started
                if not result.success:
                    print(f"the embedded run failed ({result.stats.stop_reason}); pick a task that succeeds")
                    return 1
                _wait(reset.call_async(Trigger.Request()))
                reply = send_task(client, instruction, server_wait=30.0)
                if reply.result is None or not reply.result.success:
                    print(f"the ROS run failed: {reply.result.error_msg if reply.result else 'rejected'}")
                    return 1
                if i > 0:
                    embedded.append(Run(embedded_seconds, result.stats.acting_seconds, result.stats.steps))
                    ros.append(Run(reply.seconds, reply.result.acting_seconds, reply.result.steps))
            skill_ms = _skill_round_trips(client, round_trips)
            graph_ms = _graph_round_trips(client, round_trips)
    med = statistics.median
    total_e, total_r = med(r.total for r in embedded), med(r.total for r in ros)
    step_e, step_r = med(1000 * r.total / r.steps for r in embedded), med(1000 * r.total / r.steps for r in ros)
    act_e, act_r = med(1000 * r.acting / r.steps for r in embedded), med(1000 * r.acting / r.steps for r in ros)
    overhead = act_r - act_e
    print(f"{'median of ' + str(runs) + ' runs':<34}{'embedded':>10}{'ROS graph':>11}{'ratio':>8}")
    print(f"{'total per task (s)':<34}{total_e:>10.3f}{total_r:>11.3f}{total_r / total_e:>8.2f}")
    print(f"{'per step (ms), ' + str(ros[0].steps) + ' steps':<34}{step_e:>10.2f}{step_r:>11.2f}{step_r / step_e:>8.2f}")
    print(f"{'acting per step (ms), no planning':<34}{act_e:>10.2f}{act_r:>11.2f}{act_r / act_e:>8.2f}")
    print(f"ROS overhead per step: {overhead:.2f} ms at the median (bar {BAR_MS_PER_STEP:.0f} ms, aim {AIM_MS_PER_STEP:.0f} ms); "
          f"end to end {step_r - step_e:+.2f} ms, planning jitter included")
    print(f"ExecuteSkill round trip over DDS ({round_trips}x navigate_to): median {med(skill_ms):.2f} ms, "
          f"p99 {percentile(skill_ms, 99):.2f} ms")
    print(f"GetSceneGraph round trip ({round_trips}x): median {med(graph_ms):.2f} ms, "
          f"p99 {percentile(graph_ms, 99):.2f} ms")
    return 0 if overhead <= BAR_MS_PER_STEP else 1


def _skill_round_trips(node: Node, count: int) -> list[float]:
    client = ActionClient(node, ExecuteSkill, "skills/navigate_to")
    if not client.wait_for_server(timeout_sec=10.0):
        raise TimeoutError("skills/navigate_to is not served")
    graph = _wait(node.create_client(GetSceneGraph, "get_scene_graph").call_async(GetSceneGraph.Request())).graph
    rooms = [r.id for r in graph.rooms]
    times = []
    for i in range(count):
        goal = ExecuteSkill.Goal(call=SkillCall(skill="navigate_to", args=[rooms[i % len(rooms)]]))
        started = time.perf_counter()
        answer = client.send_goal_reliably(goal, timeout=10.0)
        if answer.handle is None or client.get_result_reliably(answer.handle, timeout=10.0).response is None:
            raise TimeoutError(f"skills/navigate_to: goal {i} {answer.why_text() if answer.handle is None else 'had no result'}")
        times.append(1000 * (time.perf_counter() - started))
    client.destroy()
    return times


def _graph_round_trips(node: Node, count: int) -> list[float]:
    client = node.create_client(GetSceneGraph, "get_scene_graph")
    times = []
    for _ in range(count):
        started = time.perf_counter()
        _wait(client.call_async(GetSceneGraph.Request()))
        times.append(1000 * (time.perf_counter() - started))
    return times
