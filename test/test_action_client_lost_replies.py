"""The project's action client against replies that are lost or late, and executors that die.

Each loss is made to happen on purpose, on real rclpy over DDS: the server's rcl handle is wrapped
so that it drops what a lossy link would (a goal response, a result response), or the server
ignores a goal request as if it never arrived. rclpy's own client would wait forever in each case;
ours must end with the goal's real result, and run the goal once."""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from ros_helpers import require_ros, shut_down

require_ros()

import rclpy  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from rclpy.action import ActionClient as RclpyActionClient  # noqa: E402
from rclpy.action import ActionServer as RclpyActionServer  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.task import Future  # noqa: E402

from conceptagent_ros.action import ExecuteTask  # noqa: E402
from conceptagent_ros.ros import spin_threads  # noqa: E402
from conceptagent_ros.ros.action_client import ActionClient  # noqa: E402
from conceptagent_ros.ros.action_server import ActionServer  # noqa: E402
from conceptagent_ros.ros.futures import wait_done  # noqa: E402
from conceptagent_ros.ros.spin_threads import ExecutorDied, SpinThread  # noqa: E402


class Dropping:
    """A server's rcl handle that drops the first `count` calls of `method` (a reply lost on the wire)."""

    def __init__(self, handle: object, method: str, count: int):
        self._handle, self._method, self.left, self.dropped = handle, method, count, 0

    def __getattr__(self, name: str) -> object:
        attribute = getattr(self._handle, name)
        if name != self._method:
            return attribute

        def maybe(*args: object) -> object:
            if self.left > 0:
                self.left -= 1
                self.dropped += 1
                return None
            return attribute(*args)
        return maybe


class Runs:
    """The server's execute callback: counts runs, sends feedback, succeeds after `seconds`."""

    def __init__(self, seconds: float = 0.3, feedback: bool = True):
        self.seconds, self.feedback, self.count = seconds, feedback, 0

    def __call__(self, goal_handle: Any) -> Any:
        self.count += 1
        if self.feedback:
            goal_handle.publish_feedback(ExecuteTask.Feedback())
        time.sleep(self.seconds)
        goal_handle.succeed()
        return ExecuteTask.Result(success=True, error_msg=goal_handle.request.instruction)


@contextlib.contextmanager
def _graph(domain: int, server_class: type, runs: Runs) -> Iterator[tuple[Any, ActionClient, SpinThread]]:
    """A server node and a client node, each spun by its own executor on a SpinThread."""
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    server_node = Node("lossy_server", context=context)
    client_node = Node("lossy_client", context=context)
    server = server_class(server_node, ExecuteTask, "lossy", execute_callback=runs,
                          callback_group=ReentrantCallbackGroup())
    client = ActionClient(client_node, ExecuteTask, "lossy")
    server_executor = MultiThreadedExecutor(num_threads=3, context=context)
    server_executor.add_node(server_node)
    client_executor = SingleThreadedExecutor(context=context)
    client_executor.add_node(client_node)
    threads = [SpinThread(server_executor, "lossy-server"), SpinThread(client_executor, "lossy-client")]
    for thread in threads:
        thread.start()
    try:
        assert client.wait_for_server(timeout_sec=10.0)
        yield server, client, threads[1]
    finally:
        for thread in threads:
            thread.stop(timeout=2.0)
        client.destroy()
        server.destroy()
        server_node.destroy_node()
        client_node.destroy_node()
        shut_down(context)


@pytest.fixture
def domain() -> Iterator[int]:
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        yield reserved


def _run_once(client: ActionClient, instruction: str, accept_within: float = 10.0) -> Any:
    answer = client.send_goal_reliably(ExecuteTask.Goal(instruction=instruction), timeout=accept_within)
    assert answer.handle is not None, answer.why
    ended = client.get_result_reliably(answer.handle, timeout=10.0)
    assert ended.response is not None, ended.why
    return ended.response


def test_a_goal_whose_responses_are_all_lost_is_accepted_on_its_feedback_or_status(domain: int) -> None:
    # rclpy's own server, so the client copes with servers that are not the project's
    runs = Runs(seconds=0.3)
    with _graph(domain, RclpyActionServer, runs) as (server, client, _):
        server._handle = Dropping(server._handle, "send_goal_response", count=1000)
        started = time.monotonic()
        response = _run_once(client, "no goal response")
        assert response.status == GoalStatus.STATUS_SUCCEEDED and response.result.error_msg == "no goal response"
        assert server._handle.dropped >= 1 and runs.count == 1
        assert time.monotonic() - started < 8.0  # not the 10 s a lost acceptance would wait out


def test_a_goal_request_that_never_arrived_is_sent_again_and_runs_once(domain: int) -> None:
    class LosesTheFirstRequest(ActionServer):
        requests: list[bytes] = []

        async def _execute_goal_request(self, request_header_and_message: Any) -> None:
            self.requests.append(bytes(request_header_and_message[1].goal_id.uuid))
            if len(self.requests) == 1:
                return  # as if it was lost on the way: no goal, no answer
            await super()._execute_goal_request(request_header_and_message)

    runs = Runs(seconds=0.1, feedback=False)
    with _graph(domain, LosesTheFirstRequest, runs) as (server, client, _):
        response = _run_once(client, "second copy")
        assert response.status == GoalStatus.STATUS_SUCCEEDED
        assert len(server.requests) == 2 and server.requests[0] == server.requests[1]  # the same goal, again
        assert runs.count == 1


def test_the_projects_server_accepts_a_copy_of_a_goal_it_has_and_runs_it_once(domain: int) -> None:
    from unique_identifier_msgs.msg import UUID

    runs = Runs(seconds=0.5, feedback=False)
    with _graph(domain, ActionServer, runs) as (_, client, _):
        goal_id = UUID(uuid=list(range(16)))
        first = client.send_goal_async(ExecuteTask.Goal(instruction="twice"), goal_uuid=goal_id)
        assert wait_done(first, 10.0) and first.result().accepted
        second = client.send_goal_async(ExecuteTask.Goal(instruction="twice"), goal_uuid=goal_id)
        assert wait_done(second, 10.0)
        assert second.result().accepted  # rclpy's own server would say "rejected"
        ended = client.get_result_reliably(first.result(), timeout=10.0)
        assert ended.response.status == GoalStatus.STATUS_SUCCEEDED
        assert runs.count == 1


def test_a_lost_result_response_is_asked_for_again(domain: int) -> None:
    runs = Runs(seconds=0.2, feedback=False)
    with _graph(domain, ActionServer, runs) as (server, client, _):
        server._handle = Dropping(server._handle, "send_result_response", count=1)
        response = _run_once(client, "result again")
        assert response.status == GoalStatus.STATUS_SUCCEEDED and response.result.error_msg == "result again"
        assert server._handle.dropped == 1 and runs.count == 1


def test_a_client_made_while_its_node_spins_leaves_the_executor_alive(domain: int) -> None:
    """The executor takes data from a new client before its constructor has returned (forced here:
    the node's add_waitable waits until it has), as it may whenever a client is made on a node that
    already spins. The project's client survives that; one that makes its lock after rclpy's
    constructor (as it did) kills the executor's thread, and the next wait says so at once."""

    class LockMadeLate(ActionClient):
        """The order the project's client had: rclpy's constructor first, its own state after."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            RclpyActionClient.__init__(self, *args, **kwargs)
            self._request_lock = threading.RLock()
            self._abandoned, self._settled, self._evidence = set(), set(), {}
            self._news = threading.Condition(self._request_lock)
            self._destroyed = False

    def outcome(client_class: type) -> SpinThread:
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        node = Node("spinning_first", context=context)
        server = RclpyActionServer(node, ExecuteTask, "early", execute_callback=Runs(0.0, feedback=False))
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        thread = SpinThread(executor, f"early-{client_class.__name__}")
        thread.start()
        # One goal first, so that the server's status topic (transient local) holds a message that a
        # new client receives the moment it matches
        first = ActionClient(node, ExecuteTask, "early")
        assert first.wait_for_server(timeout_sec=10.0)
        _run_once(first, "a goal to have a status")
        taken = threading.Event()
        add_waitable = node.add_waitable

        def add_and_let_it_be_taken(waitable: Any) -> None:
            if isinstance(waitable, ActionClient):
                def take_data() -> Any:
                    taken.set()
                    return type(waitable).take_data(waitable)
                waitable.take_data = take_data
            add_waitable(waitable)
            if isinstance(waitable, ActionClient):
                # the status topic (transient local) gives the client data as soon as it matches
                taken.wait(10.0)
                time.sleep(0.2)  # for a thread that dies of it to have died

        node.add_waitable = add_and_let_it_be_taken
        try:
            client = client_class(node, ExecuteTask, "early")
            assert taken.is_set(), "the executor never took data from the new client"
            if thread.error is None:
                assert client.wait_for_server(timeout_sec=10.0)
                _run_once(client, "after a spinning start")
            else:
                never = Future()
                started = time.monotonic()
                with pytest.raises(ExecutorDied, match="early-LockMadeLate"):
                    wait_done(never, 30.0)
                assert time.monotonic() - started < 10.0  # at once (a loaded machine's once), not after the 30 s
            client.destroy()
            first.destroy()
            return thread
        finally:
            thread.stop(timeout=2.0)
            server.destroy()
            node.destroy_node()
            shut_down(context)
            spin_threads.forget_dead()

    assert outcome(ActionClient).error is None
    died = outcome(LockMadeLate).error
    assert isinstance(died, AttributeError) and "_request_lock" in str(died)


def test_a_spin_thread_that_raises_is_reported_and_fails_the_waits(domain: int, capfd: pytest.CaptureFixture) -> None:
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = Node("raises", context=context)

    def broken() -> None:
        raise ValueError("a callback's bug")

    node.create_timer(0.05, broken)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = SpinThread(executor, "raises-spin")
    thread.start()
    try:
        thread.join(5.0)
        assert not thread.is_alive() and isinstance(thread.error, ValueError)
        assert "the executor thread 'raises-spin' died" in capfd.readouterr().err
        with pytest.raises(ExecutorDied, match="a callback's bug"):
            wait_done(Future(), 30.0)
    finally:
        spin_threads.forget_dead()
        thread.stop(timeout=2.0)
        node.destroy_node()
        shut_down(context)


def test_a_goal_no_server_takes_times_out_and_is_canceled_by_id(domain: int) -> None:
    class IgnoresEveryRequest(ActionServer):
        cancels: list[bytes] = []

        async def _execute_goal_request(self, request_header_and_message: Any) -> None:
            return  # every copy lost on the way

        async def _execute_cancel_request(self, request_header_and_message: Any) -> None:
            self.cancels.append(bytes(request_header_and_message[1].goal_info.goal_id.uuid))
            await super()._execute_cancel_request(request_header_and_message)

    runs = Runs(seconds=0.1, feedback=False)
    with _graph(domain, IgnoresEveryRequest, runs) as (server, client, _):
        started = time.monotonic()
        answer = client.send_goal_reliably(ExecuteTask.Goal(instruction="nobody"), timeout=2.5, resend_after=0.5)
        assert answer.handle is None and answer.why == "timeout"
        assert 2.5 <= time.monotonic() - started < 8.0  # the timeout, not the time of a resend or a reply
        deadline = time.monotonic() + 5.0
        while not server.cancels and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.cancels) == 1 and runs.count == 0  # the goal is canceled by its id, and never ran
