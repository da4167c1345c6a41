"""The OpenAI backend against a real local HTTP server; reply parsing; the LLM-driven agent."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pddl_judge import Judge

from conceptagent_ros.errors import LLMError
from conceptagent_ros.llm.base import ChatMessage
from conceptagent_ros.llm.cache import ResponseCache
from conceptagent_ros.llm.openai_chat import OpenAIChatModel
from conceptagent_ros.planning.agent import Agent, AgentConfig
from conceptagent_ros.planning.chat_roles import ChatRoles
from conceptagent_ros.planning.planners.iterative import IterativePlanner
from conceptagent_ros.planning.proposal import Proposal, TokenUsage
from conceptagent_ros.planning.reply_parsing import parse_action_reply
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

HELLO = [ChatMessage("user", "hello")]


def model(server, **kw) -> OpenAIChatModel:
    return OpenAIChatModel("test-model", base_url=server.base_url, api_key="k", backoff=0.01, **kw)


def test_reply_and_token_accounting(chat_server):
    server = chat_server(['{"action": "done()"}'])
    reply = model(server).complete(HELLO, json_mode=True)
    assert reply.text == '{"action": "done()"}' and reply.prompt_tokens >= 1 and reply.completion_tokens >= 1
    assert server.requests[0]["response_format"] == {"type": "json_object"}


def test_retries_rate_limits_and_server_errors(chat_server):
    server = chat_server([{"status": 429}, {"status": 500}, "ok"])
    assert model(server, retries=3).complete(HELLO).text == "ok"
    assert len(server.requests) == 3


def test_gives_up_with_a_clear_error(chat_server):
    server = chat_server([{"status": 503}])
    with pytest.raises(LLMError, match="after 3 attempts"):
        model(server, retries=2).complete(HELLO)


def test_client_errors_are_not_retried(chat_server):
    server = chat_server([{"status": 401}])
    with pytest.raises(LLMError, match="refused the request \\(401\\)"):
        model(server, retries=3).complete(HELLO)
    assert len(server.requests) == 1


def test_slow_replies_time_out(chat_server):
    server = chat_server([{"delay": 1.5, "text": "late"}])
    with pytest.raises(LLMError, match="Timeout|timed out"):
        model(server, retries=0, timeout=0.3).complete(HELLO)


@pytest.mark.parametrize("body", [b'{"id": "x", "choices": [{"message": {"content": "cut', b"<html>502 Bad Gateway</html>",
                                  b'{"choices": []}'])
def test_truncated_and_non_json_bodies(chat_server, body):
    server = chat_server([{"raw": body}])
    with pytest.raises(LLMError):
        model(server, retries=1).complete(HELLO)
    assert len(server.requests) == 2


def test_disk_cache_answers_repeated_requests(chat_server, tmp_path):
    server = chat_server(["cached answer"])
    cache = ResponseCache(tmp_path / "llm.sqlite")
    first = model(server, cache=cache).complete(HELLO)
    second = model(server, cache=ResponseCache(tmp_path / "llm.sqlite")).complete(HELLO)
    assert second.text == first.text and second.cached and len(server.requests) == 1


@pytest.mark.parametrize("reply, call, error", [
    ('{"thought": "go", "action": "pick(apple_1)"}', "pick(apple_1)", None),
    ('Sure!\n```json\n{"action": "place(apple_1, fridge_1)"}\n```', "place(apple_1, fridge_1)", None),
    ('{"skill": "open", "args": ["fridge_1"]}', "open(fridge_1)", None),
    ("Thought: ...\nAction: navigate_to(sink_1)", "navigate_to(sink_1)", None),
    ("", None, "empty"),
    ('{"thought": "cut off', None, "not valid JSON"),
    ('{"thought": "no action"}', None, 'no "action"'),
    ('{"action": "pick(apple_1); import os; os.system(\'rm -rf /\')"}', None, "nothing else"),
    ('{"action": 42}', None, 'no "action"'),
    ("I refuse." * 5000, None, "no JSON"),
    ('{"skill": "pick", "args": [{"$ne": 1}]}', None, "list of object ids"),
])
def test_reply_parsing(reply, call, error):
    parsed = parse_action_reply(reply)
    assert (str(parsed.call) if parsed.call else None) == call
    if error:
        assert error in (parsed.error or "")


JUDGE = Judge(sorted(yaml.safe_load((Path(__file__).parent.parent / "config" / "categories.yaml").read_text())["categories"])
              + ["room"])


def make_agent(proposer, grounding=True, steps=12, judged: list | None = None):
    """The agent on the embedded world; every call that reaches the world is first judged on the
    true state by the independent judge (test/pddl_judge.py), not by the world's own laws, which
    share the verifier under test."""
    world = World(load_scene("studio_kitchen"), seed=0)
    graph = SceneGraph(world.scene.rooms, world.robot)
    verifier = PreconditionVerifier(world.domain, world.skills)
    executed: list[SkillOutcome] = []
    real_execute = world.execute

    def execute(call):
        if judged is not None:
            truth = world.state()
            judged.append((str(call), JUDGE.feasible(call.skill, call.args, truth.atoms, truth.types)))
        outcome = real_execute(call)
        executed.append(outcome)
        return outcome

    world.execute = execute  # type: ignore[method-assign]
    agent = Agent(proposer, verifier, world.skills, world, graph,
                  AgentConfig(max_steps=steps, precondition_grounding=grounding))
    return agent, world, executed


def test_llm_agent_gets_feedback_and_recovers(chat_server):
    script = [
        "not json at all",
        '{"action": "pick(unicorn_1)"}',
        '{"action": "open(fridge_1)"}',
        '{"action": "navigate_to(fridge_1)"}',
        '{"action": "open(fridge_1)"}',
        '{"action": "done()"}',
    ]
    server = chat_server(script)
    agent, world, executed = make_agent(IterativePlanner(ChatRoles(model(server))))
    stats = agent.run("open the fridge", None)
    assert stats.declared_done and world.scene.objects["fridge_1"].flag("open")
    assert [str(o.call) for o in executed] == ["navigate_to(fridge_1)", "open(fridge_1)"]
    prompts = [r["messages"][-1]["content"] for r in server.requests]  # the feedback ends the conversation
    assert "could not be used" in prompts[1]
    assert "unknown object(s) 'unicorn_1'" in prompts[2]
    assert "(near fridge_1) is false" in prompts[3]
    assert stats.malformed_replies == 1 and stats.invalid_proposals == 1 and stats.infeasible_proposed == 1


class RandomProposer:
    """An LLM that proposes anything: real skills on random objects, made-up skills and objects."""

    name = "random"

    def __init__(self, choices):
        self.choices = list(choices)
        self.usage = TokenUsage()

    def propose(self, context):
        call = self.choices.pop(0) if self.choices else SkillCall("done")
        return Proposal(call, raw=str(call))


OBJECT_IDS = list(load_scene("studio_kitchen").objects) + ["kitchen_1", "ghost_1", "apple_99"]
SKILLS = [s.name for s in World(load_scene("studio_kitchen")).skills.actionable()] + ["teleport"]
calls = st.builds(lambda s, a: SkillCall(s, tuple(a)), st.sampled_from(SKILLS),
                  st.lists(st.sampled_from(OBJECT_IDS), min_size=0, max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=30))
def test_grounding_never_executes_an_infeasible_action(proposals):
    judged: list = []
    agent, world, executed = make_agent(RandomProposer(proposals), grounding=True, steps=30, judged=judged)
    agent.run("anything", None)
    assert all(verdict is True for _, verdict in judged), judged  # the judge, not the world's own laws
    assert all(o.failure not in ("precondition", "invalid") for o in executed), [o.message for o in executed]


def test_without_grounding_the_same_proposals_do_fail():
    proposals = [SkillCall("pick", ("tomato_1",)), SkillCall("open", ("fridge_1",)), SkillCall("teleport", ())]
    judged: list = []
    agent, world, executed = make_agent(RandomProposer(proposals), grounding=False, judged=judged)
    agent.run("anything", None)
    assert judged == [("pick(tomato_1)", False), ("open(fridge_1)", False), ("teleport()", None)]
    # pick(tomato_1): unseen by the robot, real in the world (inside the closed fridge)
    assert [o.failure for o in executed] == ["precondition", "precondition", "invalid"]
