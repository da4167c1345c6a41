"""A real HTTP server on 127.0.0.1 speaking the chat-completions protocol, with scripted replies.

Each scripted item is one of:
  "text"                          -> 200 with that assistant message
  {"status": 429}                 -> that HTTP status with an error body
  {"delay": 2.0, "text": "..."}   -> answer after a delay
  {"raw": b"..."}                 -> 200 with exactly these body bytes (truncated / non-JSON)
  {"text": "...", "single": True} -> one choice even when the request asks for n
When the script runs out, the last item repeats. Requests are recorded for assertions.
`rejects` names request fields the server does not know: a request with one is answered 400, as
OpenAI answers an unknown argument (an older server without `response_format`, say).

`/v1/completions` (the legacy endpoint, used for token log-probabilities) is answered by the
`next_token_logprobs(prompt) -> {token: logprob}` callable, one token per request.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedChatServer:
    def __init__(self, script: list[Any] | None = None,
                 next_token_logprobs: Callable[[str], dict[str, float]] | None = None,
                 rejects: tuple[str, ...] = ()):
        self.script: list[Any] = list(script or ["{}"])
        self.rejects = rejects
        self.next_token_logprobs = next_token_logprobs
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                unknown = [field for field in server.rejects if field in body]
                if unknown:
                    message = f"Unrecognized request argument supplied: {unknown[0]}"
                    self._send(400, json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                                          "param": unknown[0]}}).encode())
                    return
                if self.path.rstrip("/").endswith("/completions") and "/chat/" not in self.path:
                    self._completion(body)
                    return
                with server._lock:
                    item = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                if isinstance(item, dict) and "delay" in item:
                    time.sleep(item["delay"])
                if isinstance(item, dict) and "status" in item:
                    payload = json.dumps({"error": {"message": f"scripted {item['status']}", "type": "test"}}).encode()
                    self._send(item["status"], payload)
                    return
                if isinstance(item, dict) and "raw" in item:
                    self._send(200, item["raw"])
                    return
                text = item["text"] if isinstance(item, dict) else str(item)
                n = 1 if isinstance(item, dict) and item.get("single") else int(body.get("n", 1) or 1)
                prompt_chars = sum(len(m.get("content", "")) for m in body.get("messages", []))
                payload = json.dumps({
                    "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                                for i in range(n)],
                    "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4 + 1,
                              "total_tokens": prompt_chars // 4 + len(text) // 4 + 1},
                }).encode()
                self._send(200, payload)

            def _completion(self, body: dict[str, Any]) -> None:
                top = server.next_token_logprobs(str(body.get("prompt", ""))) if server.next_token_logprobs else {}
                best = max(top, key=top.get) if top else ""
                payload = json.dumps({
                    "id": "cmpl-test", "object": "text_completion", "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "text": best, "finish_reason": "length",
                                 "logprobs": {"tokens": [best], "token_logprobs": [top.get(best, 0.0)],
                                              "top_logprobs": [top], "text_offset": [0]}}],
                    "usage": {"prompt_tokens": len(str(body.get("prompt", ""))) // 4, "completion_tokens": 1,
                              "total_tokens": len(str(body.get("prompt", ""))) // 4 + 1},
                }).encode()
                self._send(200, payload)

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
