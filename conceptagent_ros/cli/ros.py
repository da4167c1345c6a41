"""`conceptagent ros up|send|demo|bench|suite|voxposer-bench` and `conceptagent say`: the ROS graph from
a shell, for pip installs where `ros2 launch` and `ros2 topic pub` are not available.

The parsers need no ROS; each handler imports the ROS layer (conceptagent_ros.ros) when it runs and
turns a missing ROS client library into one line that says how to install it."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, printable
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.terminal import step_lines

SHUTDOWN_SECONDS = 5.0
# seconds the planner waits for a scene graph with the body seeing through perception: the body's
# first look around (12 images, each fused before the next) comes before the first graph
FIRST_LOOK_S = 60.0


def _needs_ros() -> None:
    try:  # the ROS client library, and the project's own interfaces that rosidl generates
        import conceptagent_ros.ros.conversions.skills  # noqa: F401
        import conceptagent_ros.ros.spin  # noqa: F401
    except ImportError as e:
        raise ConceptAgentError(f"ROS 2 is not available here ({e}); on a pip install run `make ros` "
                                "(or pip install -c constraints.txt -e '.[ros]' and python tools/build_ros_interfaces.py), "
                                "in a ROS workspace source install/setup.bash") from e


ROS_NAMESPACE = "conceptagent"


def add_parsers(sub: Any) -> None:
    """`ros` and `say`: nothing of ROS is imported until one of them runs."""
    ros = sub.add_parser("ros", help="the ROS 2 graph: up, send, demo, bench, suite, soak, voxposer-bench")
    ros_sub = ros.add_subparsers(dest="ros_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--namespace", default=ROS_NAMESPACE, help=f"ROS namespace of the graph (default {ROS_NAMESPACE})")

    up = ros_sub.add_parser("up", help="robot stand-in + planner node in one process, until Ctrl-C")
    common(up)
    up.add_argument("--params", help="ROS params YAML (e.g. config/ros/embedded.yaml)")
    up.add_argument("--scene", help="scene of the robot stand-in")
    up.add_argument("--planner", help="planner spec")
    up.add_argument("--llm", help="LLM spec")
    up.add_argument("--preempt", action="store_true", help="a new task replaces the running one")
    up.add_argument("--skill-duration", type=float, help="seconds each simulated skill takes")
    up.add_argument("--failure-rate", action="append", metavar="SKILL=P")
    up.add_argument("--body", choices=("standin", "pybullet"), default="standin",
                    help="the robot: standin (the embedded world, default) or pybullet (a body in PyBullet: in a "
                         "household scene conceptagent_mm in the exported world, at --scene tabletop the Franka "
                         "Panda; the manipulation node serves every skill and publishes what its cameras see)")
    up.add_argument("--body-perception", choices=("camera", "body"), default="camera",
                    help="--body pybullet in a household: camera (default) sends the mast camera's images to the "
                         "perception node and the scene graph node builds the planner's graph, as on a robot; body: "
                         "the body publishes its own view as the scene graph")
    up.add_argument("--sensing", choices=("ideal", "realistic"),
                    help="--body pybullet: the body's senses (default: its own, realistic)")
    up.add_argument("--nodes", default="robot,planner",
                    help="which nodes this process runs: robot, planner or robot,planner (one process per node "
                         "is how ros2 launch runs them)")
    up.set_defaults(func=cmd_up)

    send = ros_sub.add_parser("send", help="send one task through the ExecuteTask action and follow it")
    common(send)
    send.add_argument("instruction")
    send.add_argument("--goal", help="PDDL goal")
    send.add_argument("--planner", help="planner spec for this task")
    send.add_argument("--timeout", type=float, default=600.0)
    send.set_defaults(func=cmd_send)

    demo = ros_sub.add_parser("demo", help="bring the graph up in a child process and send one task to it")
    common(demo)
    demo.add_argument("instruction", nargs="?", default="put the apple in the fridge")
    demo.add_argument("--scene", default="studio_kitchen")
    demo.add_argument("--planner", default="react")
    demo.add_argument("--llm", default="offline")
    demo.add_argument("--timeout", type=float, default=300.0)
    demo.add_argument("--body", choices=("standin", "pybullet"), default="standin",
                      help="pybullet: a body in PyBullet is the robot (conceptagent_mm in a household scene's "
                           "exported world; at --scene tabletop the Franka Panda)")
    demo.set_defaults(func=cmd_demo)

    bench = ros_sub.add_parser("bench", help="ROS overhead against the embedded run; skill action round trip; "
                                             "with --loss, a task across two hosts on a lossy link")
    bench.add_argument("--scene", default="studio_kitchen")
    bench.add_argument("--instruction", default="put the apple in the fridge")
    bench.add_argument("--runs", type=int, help="runs each way (default 3; 10 with --loss)")
    bench.add_argument("--round-trips", type=int, default=300)
    bench.add_argument("--loss", type=float, metavar="PERCENT",
                       help="robot and planner in two network namespaces, PERCENT %% of UDP packets dropped each way "
                            "(nftables; needs root): wall time of the task at 0 %% and at PERCENT %%, and the ratio")
    bench.add_argument("--fastdds-defaults", action="store_true",
                       help="with --loss: Fast DDS's own defaults instead of the shipped profile, for comparison")
    bench.add_argument("--out", help="with --loss: write ros_loss_<PERCENT>[_fastdds_defaults].md and .csv here")
    bench.set_defaults(func=cmd_bench)

    suite = ros_sub.add_parser("suite", help="a task suite through the ROS graph (stand-in, planner node and, with "
                                             "--perception camera, the perception node), judged on the stand-in's world")
    suite.add_argument("--suite", default="easy", help="built-in suite (default easy)")
    suite.add_argument("--tasks", help="a task file instead of a built-in suite")
    suite.add_argument("--task", action="append", metavar="ID", help="only these task ids (repeatable)")
    suite.add_argument("--perception", choices=["truth", "camera"], default="camera",
                       help="camera (default): the planner sees what the perception node fused from the stand-in's "
                            "RGB-D camera; truth: the stand-in's ground-truth graph")
    suite.add_argument("--detector", choices=["oracle", "sim_paint"], default="oracle",
                       help="what the perception node sees the synthetic camera with")
    suite.add_argument("--planner", default="react")
    suite.add_argument("--llm", default="offline")
    suite.add_argument("--timeout", type=float, default=300.0, help="seconds per task")
    suite.add_argument("--body", choices=["standin", "pybullet"], default="standin",
                       help="pybullet: conceptagent_mm in each task's exported world is the robot (a graph per task; "
                            "its mast camera's images go to the perception node, oracle detector), judged on "
                            "PyBullet's state")
    suite.add_argument("--body-perception", choices=("camera", "body"), default="camera",
                       help="--body pybullet: camera (default): through the perception and scene graph nodes; body: "
                            "the body's own view as the scene graph")
    suite.add_argument("--sensing", choices=("ideal", "realistic"),
                       help="--body pybullet: the body's senses (default: realistic)")
    suite.add_argument("--out", help="write ros_suite_<suite>_<perception or pybullet>.md and .csv here")
    suite.set_defaults(func=cmd_suite)

    soak = ros_sub.add_parser("soak", help="many tasks back to back through one graph: every task ends, memory, "
                                           "threads and DDS participants stay flat")
    soak.add_argument("--tasks", type=int, default=200, help="how many tasks (the suite's, cycled; default 200)")
    soak.add_argument("--suite", default="easy", help="built-in suite whose tasks are cycled (default easy)")
    soak.add_argument("--perception", choices=["truth", "camera"], default="camera",
                      help="camera (default): the perception and scene graph nodes in the loop")
    soak.add_argument("--timeout", type=float, default=120.0, help="seconds per task")
    soak.add_argument("--out", help="write ros_soak_<perception>.md and .csv here")
    soak.set_defaults(func=cmd_soak)

    vb = ros_sub.add_parser("voxposer-bench", help="the VoxPoser templates through the trajectory node's action "
                                                   "(node in a child process, judged from PyBullet's ground truth)")
    common(vb)
    vb.add_argument("--seeds", type=int, default=20, help="seeded episodes per template")
    vb.add_argument("--template", type=int, action="append", metavar="N", help="template 1..13 (repeatable; default all)")
    vb.add_argument("--unseen", action="store_true", help="other colours, corners, sides and distances")
    vb.add_argument("--llm", default="offline")
    vb.add_argument("--timeout", type=float, default=300.0, help="seconds per episode")
    vb.add_argument("--out", help="write voxposer_node.md and voxposer_node_episodes.csv here")
    vb.set_defaults(func=cmd_voxposer_bench)

    say = sub.add_parser("say", help="publish a text command to the planner (like ros2 topic pub --once)")
    say.add_argument("text", nargs="*")
    say.add_argument("--audio", metavar="FILE.wav", help="the command spoken in a WAV file, heard here by Whisper base")
    say.add_argument("--asr-model", default="whisper-base", help="for --audio: a speech model name or folder")
    say.add_argument("--scene", help="for --audio: tell Whisper the names of the things in this scene")
    say.add_argument("--namespace", default=ROS_NAMESPACE)
    say.add_argument("--topic", default="command")
    say.add_argument("--wait", type=float, default=5.0, help="seconds to wait for a subscriber (DDS discovery)")
    say.set_defaults(func=cmd_say)


def _graph_options(args: argparse.Namespace) -> Any:
    from conceptagent_ros.ros.bringup import GraphOptions

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
    manipulation = None
    if getattr(args, "body", "standin") == "pybullet" and "robot" in nodes:
        from conceptagent_ros.ros.bringup import body_options

        manipulation = body_options(robot.get("scene", "tabletop"), getattr(args, "body_perception", "camera"),
                                    getattr(args, "sensing", None))
        if manipulation.get("perception") == "camera":  # its first look around goes through perception first
            planner.setdefault("graph_timeout", FIRST_LOOK_S)
        if robot.keys() - {"scene"}:
            raise ConceptAgentError("--body pybullet: --skill-duration and --failure-rate are the stand-in's; "
                                    "the arm takes the time physics takes and fails as physics has it")
    return GraphOptions(namespace=args.namespace, params_file=getattr(args, "params", None), planner=planner, robot=robot,
                        with_robot="robot" in nodes and manipulation is None, with_planner="planner" in nodes,
                        manipulation=manipulation)


def cmd_up(args: argparse.Namespace) -> int:
    if args.params and not os.path.isfile(args.params):
        raise ConceptAgentError(f"--params {args.params}: no such file")
    _needs_ros()
    from conceptagent_ros.ros.bringup import bring_up

    # Ctrl-C and SIGTERM only set an event: a KeyboardInterrupt raised at a random point of the
    # main thread could land inside the teardown itself.
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    graph = bring_up(_graph_options(args))
    ns = "/" + args.namespace.strip("/")
    household = "manipulation" in graph.nodes and graph.nodes["manipulation"].mobile
    example = ("put the apple on the dining table" if household else "put the duck in the tray") \
        if "manipulation" in graph.nodes else "put the apple in the fridge"
    arm = "conceptagent_mm in PyBullet" if household else "PyBullet arm"
    roles = {"robot": "robot stand-in", "manipulation": arm, "scene_graph": "scene graph"}
    names = " + ".join(roles.get(n, n) for n in graph.nodes)
    print(f"ROS graph up in namespace {ns} (ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}): "
          f"{names}. Try:\n"
          f"  conceptagent say \"{example}\"\n"
          f"  conceptagent ros send \"{example}\"\n"
          f"Ctrl-C stops it.", flush=True)
    while not stop.wait(0.2) and graph.alive():
        pass
    dead = [t for t in graph.threads if t.error is not None]
    if dead:  # its traceback is printed already; a supervisor (ros2 launch, systemd) sees the failure
        print(f"conceptagent ros up: the executor thread {dead[0].name!r} died; shutting the graph down",
              file=sys.stderr, flush=True)
    _leave(graph, EXIT_FAILED if dead else EXIT_OK)
    return EXIT_OK  # not reached: _leave ends the process


def _leave(graph: Any, code: int = EXIT_OK) -> None:
    """Tear the graph down in order, within SHUTDOWN_SECONDS whatever is in flight, then end the
    process at once. The interpreter's own exit would join every non-daemon thread (an executor's
    workers inside a task among them) and run DDS's destructors, either of which can outlast any
    bound on a loaded machine; a robot's terminal or a launch supervisor must not wait on that."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_FAILED))  # a second Ctrl-C means now
    signal.signal(signal.SIGTERM, lambda *_: os._exit(EXIT_FAILED))
    closer = threading.Thread(target=graph.shutdown, daemon=True)
    closer.start()
    closer.join(SHUTDOWN_SECONDS)
    if closer.is_alive():
        print(f"conceptagent ros up: shutdown took over {SHUTDOWN_SECONDS:.0f} s; exiting anyway", file=sys.stderr,
              flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def print_step(step: Any) -> None:
    """One line per step of the planner's ExecuteTask feedback, as `conceptagent run` prints them."""
    call = f"{step.call.skill}({', '.join(step.call.args)})" if step.call.skill else None
    print("\n".join(step_lines(step.step, step.executed, step.success, call, step.call.skill or None, step.feedback)),
          flush=True)


def run_client(instruction: str, namespace: str, goal: str = "", planner: str = "", timeout: float = 600.0,
               server_wait: float = 30.0) -> int:
    _needs_ros()
    from conceptagent_ros.ros.client_node import ClientNode
    from conceptagent_ros.ros.task_client import send_task

    with ClientNode("conceptagent_client", namespace) as client:
        print(f"Sending to /{namespace.strip('/')}/execute_task: {printable(instruction)}", flush=True)
        reply = send_task(client.node, instruction, goal=goal, planner=planner, on_step=print_step,
                          server_wait=server_wait, timeout=timeout)
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
    _needs_ros()
    from conceptagent_ros.ros.graph_process import graph_command, isolated_domain, running

    with isolated_domain() as domain:
        command = graph_command("ros", "up", "--namespace", args.namespace, "--scene", args.scene,
                                "--planner", args.planner, "--llm", args.llm, "--body", args.body)
        print(f"Starting the graph (ROS_DOMAIN_ID={domain}): {' '.join(command[2:])}", flush=True)
        with running([command]):
            return run_client(args.instruction, args.namespace, timeout=args.timeout)


def cmd_say(args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    if args.audio is not None:
        if text.strip():
            raise ConceptAgentError("give the command as text or as --audio FILE.wav, not both")
        from conceptagent_ros.speech.hearing import command_from_wav, scene_vocabulary

        heard = command_from_wav(args.audio, args.asr_model, scene_vocabulary(args.scene) if args.scene else ())
        print(f"heard: {heard.text} (confidence {heard.confidence:.2f}, {heard.seconds:.1f} s)")
        text = heard.text
    if not text.strip():
        raise ConceptAgentError("say what the robot should do, e.g. conceptagent say \"put the apple in the fridge\"")
    _needs_ros()
    from conceptagent_ros.ros.client_node import ClientNode
    from conceptagent_ros.ros.task_client import publish_command

    with ClientNode("conceptagent_say", args.namespace) as client:
        receivers = publish_command(client.node, text, args.topic, wait=args.wait)
    where = f"/{args.namespace.strip('/')}/{args.topic}" if not args.topic.startswith("/") else args.topic
    if receivers == 0:
        print(f"published on {where}, but nothing subscribes to it (is the planner running?)", file=sys.stderr)
        return EXIT_FAILED
    print(f"published on {where} ({receivers} subscriber{'s' if receivers != 1 else ''})")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    if args.runs is not None and args.runs < 1:
        raise ConceptAgentError(f"--runs must be at least 1; got {args.runs}")
    _needs_ros()
    if args.loss is not None:
        return _loss_bench(args)
    from conceptagent_ros.ros.bench.graph_overhead import run_overhead_benchmark

    return run_overhead_benchmark(args.scene, args.instruction, args.runs or 3, args.round_trips)


def _loss_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.ros.bench.loss_bench import measure, summarize, summary_table, write_results
    from conceptagent_ros.ros.dds_profile import OPT_OUT, shipped_profile

    runs = args.runs or 10
    profile = "Fast DDS's defaults" if args.fastdds_defaults else f"the shipped profile {shipped_profile().name}"
    print(f"Task {args.instruction!r} on {args.scene}: robot stand-in and planner in two network namespaces, "
          f"{runs} runs on a clean link and {runs} with {args.loss:g} % of UDP packets dropped each way, "
          f"interleaved; DDS with {profile}", flush=True)
    environment = {OPT_OUT: "none"} if args.fastdds_defaults else {}
    results = measure(args.loss, runs, args.instruction, args.scene, environment)
    summary = summarize(results, args.loss)
    print(summary_table(summary, runs))
    verdict = "meets" if summary.meets_bar() else "misses"
    print(f"{args.loss:g} % loss: median {summary.median_ratio:.2f}x, worst {summary.worst_ratio:.2f}x the loss-free "
          f"median; {summary.failures} failed; {verdict} the bar")
    if args.out:
        command = f"conceptagent ros bench --loss {args.loss:g} --runs {runs}" + \
            (" --fastdds-defaults" if args.fastdds_defaults else "")
        suffix = "_fastdds_defaults" if args.fastdds_defaults else ""
        for path in write_results(results, summary, Path(args.out), command, suffix):
            print(f"wrote {path}")
    return EXIT_OK if summary.meets_bar() else EXIT_FAILED


def cmd_suite(args: argparse.Namespace) -> int:
    _needs_ros()
    from conceptagent_ros.evaluation.tasks import load_suite, load_tasks, only_tasks
    from conceptagent_ros.ros.bench.graph_suite import GraphSuiteConfig, run_graph_suite, summary_markdown, write_results

    tasks = only_tasks(load_tasks(args.tasks) if args.tasks else load_suite(args.suite), args.task,
                       args.tasks or args.suite)
    config = GraphSuiteConfig(perception=args.perception, detector=args.detector, planner=args.planner, llm=args.llm,
                              timeout=args.timeout)
    body = ""
    if getattr(args, "body", "standin") == "pybullet":
        from conceptagent_ros.ros.bench.body_suite import SEEING, run_body_suite

        episodes = run_body_suite(tasks, config, perception=args.body_perception, sensing=args.sensing)
        body = SEEING[args.body_perception]
    else:
        episodes = run_graph_suite(tasks, config)
    name = Path(args.tasks).stem if args.tasks else args.suite
    print(summary_markdown(episodes, config, name, body))
    if args.out:
        for path in write_results(episodes, config, name, Path(args.out), body):
            print(f"wrote {path}")
    return EXIT_OK if all(e.success for e in episodes) else EXIT_FAILED


def cmd_soak(args: argparse.Namespace) -> int:
    if args.tasks < 1:
        raise ConceptAgentError(f"--tasks must be at least 1; got {args.tasks}")
    _needs_ros()
    from conceptagent_ros.evaluation.tasks import load_suite
    from conceptagent_ros.ros.bench.graph_suite import GraphSuiteConfig
    from conceptagent_ros.ros.bench.soak import run_soak, summarize, summary_markdown, write_results

    config = GraphSuiteConfig(perception=args.perception, timeout=args.timeout)
    command = f"conceptagent ros soak --tasks {args.tasks} --suite {args.suite} --perception {args.perception}"
    print(f"{args.tasks} tasks of the {args.suite} suite back to back through one graph ({args.perception})", flush=True)
    samples = run_soak(load_suite(args.suite), args.tasks, config)
    summary = summarize(samples)
    print(summary_markdown(summary, config, command))
    if args.out:
        for path in write_results(samples, summary, config, Path(args.out), command):
            print(f"wrote {path}")
    return EXIT_OK if summary.passed() else EXIT_FAILED


def cmd_voxposer_bench(args: argparse.Namespace) -> int:
    _needs_ros()
    from conceptagent_ros.ros.bench.voxposer_node_bench import run_voxposer_node_bench

    return run_voxposer_node_bench(args)
