"""The operator's side of the loss benchmark, run as a process on the planner's host:

    python -m conceptagent_ros.ros.bench.task_timer [--namespace NS]

It reads one request per line on stdin and answers each with one JSON line on stdout, so the
benchmark (which changes the link between requests) drives it step by step:

    reset                 -> {"ok": true}                  the stand-in's `reset` service
    task INSTRUCTION      -> {"ok": true, "seconds": ..., "steps": ..., "error": ""}

`seconds` is the ExecuteTask goal's wall time as the client sees it (goal sent to result in), the
figure a user waits for. Discovery is done before the first answer, so it is not in any run.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from std_srvs.srv import Trigger

from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.task_client import TaskClientError, TaskSender

SERVICE_WAIT_S = 60.0
TASK_TIMEOUT_S = 300.0
AFTER_RESET_S = 0.5  # a scene graph of the reset world reaches the planner (published at 5 Hz)


def _call(client, timeout: float) -> bool:  # noqa: ANN001 - an rclpy service client
    done = threading.Event()
    future = client.call_async(Trigger.Request())
    future.add_done_callback(lambda _: done.set())
    return done.wait(timeout) and future.result() is not None and future.result().success


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", default="conceptagent")
    args = parser.parse_args(argv)
    with ClientNode("task_timer", args.namespace) as timer:
        reset = timer.node.create_client(Trigger, "reset")
        if not reset.wait_for_service(timeout_sec=SERVICE_WAIT_S):
            print(json.dumps({"ok": False, "error": f"no reset service within {SERVICE_WAIT_S:.0f} s"}), flush=True)
            return 1
        sender = TaskSender(timer.node)
        print(json.dumps({"ok": True, "ready": True}), flush=True)
        for line in sys.stdin:
            request = line.strip()
            answer: dict[str, object]
            if request == "reset":
                answer = {"ok": _call(reset, 30.0)}
                time.sleep(AFTER_RESET_S)
            elif request.startswith("task "):
                started = time.perf_counter()
                try:
                    reply = sender.send(request[len("task "):], server_wait=SERVICE_WAIT_S, timeout=TASK_TIMEOUT_S)
                except TaskClientError as e:
                    answer = {"ok": False, "seconds": time.perf_counter() - started, "steps": 0, "error": str(e)}
                else:
                    result = reply.result
                    answer = {"ok": bool(result is not None and result.success), "seconds": reply.seconds,
                              "steps": result.steps if result is not None else 0,
                              "error": "" if result is None or result.success else result.error_msg or "rejected"}
            else:
                answer = {"ok": False, "error": f"unknown request {request!r}: use reset or task INSTRUCTION"}
            print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
