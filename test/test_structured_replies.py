"""Structured replies: each role's request names its reply's shape, the shape admits exactly the
well-formed calls, a server that refuses the field is asked again without it, and the parser
takes what a free reply means where that is unambiguous and says precisely what is wrong where not."""
from __future__ import annotations

import json
import os
import re

import pytest

from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.llm.base import ChatMessage
from conceptagent_ros.llm.local_server import runtime_available
from conceptagent_ros.llm.openai_chat import OpenAIChatModel
from conceptagent_ros.planning import reply_schemas
from conceptagent_ros.planning.reply_parsing import parse_action_reply, parse_call_list, read_call
from conceptagent_ros.skills.contract import load_skill_library

SKILLS = load_skill_library()
FEW = ["apple_1", "fridge_1", "kitchen_1"]
MANY = [f"thing_{i}" for i in range(40)] + ["apple_1", "fridge_1"]


def _accepts(schema: dict, text: str) -> bool:
    """The call schema's own judgement, read with Python's regular expressions (not the parser)."""
    if "enum" in schema:
        return text in schema["enum"]
    return re.fullmatch(schema["pattern"].strip("^$"), text) is not None


@pytest.mark.parametrize("objects", [FEW, MANY], ids=["enum", "pattern"])
def test_the_call_schema_admits_exactly_the_well_formed_calls(objects):
    schema = reply_schemas.call_schema(SKILLS, objects)
    assert ("enum" in schema) == (objects is FEW)
    for good in ("pick(apple_1)", "place(apple_1, fridge_1)", "navigate_to(fridge_1)", "done()"):
        assert _accepts(schema, good), good
    for bad in ("pick(apple_1, fridge_1)", "pick(banana_9)", "open(obj)", "fly(apple_1)", "done(apple_1)",
                "navigate_to(fridge_1); place(apple_1, fridge_1)", "pick(apple_1)\nimport os", "place(apple_1,fridge_1)",
                "pick()", ""):
        assert not _accepts(schema, bad), bad


def test_every_role_schema_compiles_to_a_llama_cpp_grammar():
    """The schemas as llama.cpp's server compiles them (its own converter), pattern and enum alike."""
    if not runtime_available():
        if os.environ.get("CONCEPTAGENT_REQUIRE_LOCAL_LLM"):
            pytest.fail("llama-cpp-python is not installed (make local-llm)")
        pytest.skip("llama-cpp-python is not installed (make local-llm)")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    for objects in (FEW, MANY):
        call = reply_schemas.call_schema(SKILLS, objects)
        for reply in (reply_schemas.action_reply(call), reply_schemas.actions_reply(call, 3),
                      reply_schemas.plan_reply(call), reply_schemas.critique_reply(), reply_schemas.choice_reply(4),
                      reply_schemas.goal_reply(["in", "apple", "apple_1", "fridge_1"]),
                      reply_schemas.precondition_reply(["near", "open", "?obj"])):
            grammar = json_schema_to_gbnf(json.dumps(reply.schema))
            assert "root ::=" in grammar


def test_requests_carry_the_role_schema_in_openai_and_llama_cpp_spellings(chat_server):
    server = chat_server(['{"thought": "t", "action": "done()"}'])
    schema = reply_schemas.action_reply(reply_schemas.call_schema(SKILLS, FEW))
    messages = [ChatMessage("user", "next?")]
    OpenAIChatModel("m", base_url=server.base_url).complete(messages, json_mode=True, schema=schema)
    OpenAIChatModel("m", base_url=server.base_url, schema_style="json_object").complete(messages, schema=schema)
    openai_style, llama_style = (r["response_format"] for r in server.requests)
    assert openai_style == {"type": "json_schema", "json_schema": {"name": "next_action", "schema": schema.schema,
                                                                   "strict": True}}
    assert llama_style == {"type": "json_object", "schema": schema.schema}


def test_a_server_that_refuses_response_format_gets_prompt_only_requests_and_the_task_still_runs(chat_server,
                                                                                                  monkeypatch):
    script = ['{"thought": "go", "action": "navigate_to(apple_1)"}', '{"action": "pick(apple_1)"}',
              '{"action": "navigate_to(dining_table_1)"}', '{"action": "place(apple_1, dining_table_1)"}',
              '{"action": "done()"}']
    server = chat_server(script, rejects=("response_format",))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    result = run_episode(EpisodeSpec.of(instruction="put the apple on the dining table", scene="studio_kitchen",
                                        goal="(in apple_1 dining_table_1)", planner="react", llm="openai:m",
                                        seed=0, max_steps=8))
    assert result.success and result.stats.malformed_replies == 0
    styles = [r.get("response_format", {}).get("type") for r in server.requests]
    # refused in OpenAI's spelling, then in llama-cpp-python's, then never sent again
    assert styles[:3] == ["json_schema", "json_object", None]
    assert set(styles[3:]) == {None} and len(styles) == 3 + 4


@pytest.mark.parametrize("written, call, says", [
    ("navigate_to(fridge_1); place(apple_1, fridge_1)", "navigate_to(fridge_1)", "one call at a time"),
    ("navigate_to(fridge_1) then open(fridge_1)", "navigate_to(fridge_1)", "the first of 2"),
    ("place(obj=apple_1, receptacle=fridge_1)", "place(apple_1, fridge_1)", ""),
    ("1. pick(apple_1)", "pick(apple_1)", ""),
    ("open(obj): open fridge (closed)", None, "signature"),
    ("open(fridge_1, book_1)", None, "takes 1 object id, not 2"),
    ("fly(apple_1)", None, "fly is not a skill"),
    ("I would pick(apple_1)", None, "text before it"),
    ("pick(apple_1); import os; os.system('rm -rf /')", None, "nothing else"),
])
def test_a_free_reply_is_read_for_what_it_means_or_refused_precisely(written, call, says):
    parsed, note = read_call(written, SKILLS)
    assert (str(parsed) if parsed else None) == call
    assert says in note


def test_the_first_of_several_calls_is_taken_and_the_reader_is_told():
    reply = parse_action_reply('{"thought": "go", "action": "navigate_to(fridge_1); place(apple_1, fridge_1)"}',
                               SKILLS)
    assert str(reply.call) == "navigate_to(fridge_1)" and reply.error is None
    assert "one call at a time" in reply.thought
    calls, errors = parse_call_list('{"plan": ["navigate_to(fridge_1)", "open(obj)", "done()"]}', "plan", SKILLS)
    assert [str(c) for c in calls] == ["navigate_to(fridge_1)", "done()"]
    assert len(errors) == 1 and "signature" in errors[0]
