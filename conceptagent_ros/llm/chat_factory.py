"""The chat model behind a chat `--llm` (openai:MODEL or local[:NAME]), for every part that asks one."""
from __future__ import annotations

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.llm.openai_chat import OpenAIChatModel
from conceptagent_ros.llm.spec import LLMSpec


def open_chat_model(spec: LLMSpec) -> OpenAIChatModel:
    """openai:MODEL reads OPENAI_BASE_URL and OPENAI_API_KEY; local[:NAME] starts (once per process)
    the llama.cpp server of a fetched model and talks to it on 127.0.0.1."""
    if spec.kind == "openai":
        return OpenAIChatModel.from_env(spec.model)
    if spec.kind == "local":
        from conceptagent_ros.llm.local_server import shared_server

        server = shared_server(spec.model)
        # llama-cpp-python spells a schema {"type": "json_object", "schema": ...}; CPU calls take longer
        return OpenAIChatModel.from_env(server.model, base_url=server.base_url, name=f"local:{server.model}",
                                        schema_style="json_object", timeout=300.0)
    raise ConceptAgentError(f"--llm {spec} is not a chat model; use openai:MODEL or local[:NAME]")
