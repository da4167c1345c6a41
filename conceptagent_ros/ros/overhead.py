"""What ROS costs: the same task embedded and through the ROS graph, and one skill over DDS.

`conceptagent ros bench` runs the task with the offline planner (1) in one process on the embedded
world and (2) through the graph -- an ExecuteTask goal from a client node, the planner observing
through the GetSceneGraph service and acting through ExecuteSkill actions on the robot stand-in --
and prints per-step and total times and their ratio. Then it times ExecuteSkill round trips
(goal sent -> result received) to the stand-in, median and p99. Exit 1 when ROS adds more than
10 ms per step at the median.
"""
from __future__ import annotations

import statistics
import threading
import time

from domain_coordinator import domain_id
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from std_srvs.srv import Trigger

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.msg import SkillCall
from conceptagent_ros.ros.bringup import GraphOptions, bring_up
from conceptagent_ros.ros.task_client import send_task
from conceptagent_ros.sim.episode import EpisodeSpec, run_episode
from conceptagent_ros.srv import GetSceneGraph

BAR_MS_PER_STEP = 10.0
AIM_MS_PER_STEP = 2.0


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
    print(f"Task: {instruction!r} on {scene}, offline planner, {runs} runs each way", flush=True)
    run_episode(EpisodeSpec(instruction, scene=scene))  # warm caches (PDDL domain, planner) for both sides
    embedded: list[tuple[float, int]] = []
    for _ in range(runs):
        started = time.perf_counter()
        result = run_episode(EpisodeSpec(instruction, scene=scene))
        embedded.append((time.perf_counter() - started, result.stats.steps))
        if not result.success:
            print(f"the embedded run failed ({result.stats.stop_reason}); pick a task that succeeds")
            return 1
    with domain_id() as reserved:
        graph = bring_up(GraphOptions(robot={"scene": scene}), domain_id=reserved)
        client = Node("bench_client", namespace="conceptagent", context=graph.context)
        executor = MultiThreadedExecutor(num_threads=2, context=graph.context)
        executor.add_node(client)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        try:
            reset = client.create_client(Trigger, "reset")
            ros: list[tuple[float, int]] = []
            for i in range(runs + 1):  # the first run warms DDS discovery of every skill server
                _wait(reset.call_async(Trigger.Request()))
                reply = send_task(client, instruction)
                if reply.result is None or not reply.result.success:
                    print(f"the ROS run failed: {reply.result.error_msg if reply.result else 'rejected'}")
                    return 1
                if i > 0:
                    ros.append((reply.seconds, reply.result.steps))
            skill_ms = _skill_round_trips(client, round_trips)
            graph_ms = _graph_round_trips(client, round_trips)
        finally:
            executor.shutdown(timeout_sec=1.0)
            client.destroy_node()
            graph.shutdown()
    per_step_embedded = [1000 * t / s for t, s in embedded]
    per_step_ros = [1000 * t / s for t, s in ros]
    overhead = [r - e for r, e in zip(sorted(per_step_ros), sorted(per_step_embedded))]
    med_e, med_r, med_o = (statistics.median(v) for v in (per_step_embedded, per_step_ros, overhead))
    total_e = statistics.median(t for t, _ in embedded)
    total_r = statistics.median(t for t, _ in ros)
    steps = ros[0][1]
    print(f"{'':<28}{'embedded':>12}{'ROS graph':>12}{'ratio':>9}")
    print(f"{'total per task (s)':<28}{total_e:>12.3f}{total_r:>12.3f}{total_r / total_e:>9.2f}")
    print(f"{'per step (ms), ' + str(steps) + ' steps':<28}{med_e:>12.2f}{med_r:>12.2f}{med_r / med_e:>9.2f}")
    print(f"ROS overhead per step: {med_o:.2f} ms median (bar {BAR_MS_PER_STEP:.0f} ms, aim {AIM_MS_PER_STEP:.0f} ms)")
    print(f"ExecuteSkill round trip over DDS ({round_trips}x navigate_to): median {statistics.median(skill_ms):.2f} ms, "
          f"p99 {percentile(skill_ms, 99):.2f} ms")
    print(f"GetSceneGraph round trip ({round_trips}x): median {statistics.median(graph_ms):.2f} ms, "
          f"p99 {percentile(graph_ms, 99):.2f} ms")
    return 0 if med_o <= BAR_MS_PER_STEP else 1


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
        handle = _wait(client.send_goal_async(goal))
        _wait(handle.get_result_async())
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
