"""A local OpenAI-compatible Chat Completions server whose replies a test scripts: tool
calls, then a final answer. It records every request it gets."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def tool_calls(*calls: tuple[str, dict[str, Any] | str]) -> dict[str, Any]:
    """A reply asking for these (name, arguments) calls; a str is sent as raw arguments."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for index, (name, arguments) in enumerate(calls)
        ],
    }


def answer(text: str) -> dict[str, Any]:
    """A final reply."""
    return {"role": "assistant", "content": text}


class ScriptedModel:
    """Serves `/v1/chat/completions` on 127.0.0.1 from a queue of replies."""

    def __init__(self) -> None:
        self.replies: deque[dict[str, Any] | tuple[int, str]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *replies: dict[str, Any] | tuple[int, str]) -> None:
        """Replace the script (a (status, body) tuple answers with an HTTP error)."""
        with self.lock:
            self.replies.clear()
            self.replies.extend(replies)
            self.requests.clear()
            self.headers.clear()

    def offered_tools(self, request: int = 0) -> list[str]:
        """The tool names sent with the `request`-th request."""
        return sorted(t["function"]["name"] for t in self.requests[request].get("tools", []))

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str]:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.replies:
                return 500, json.dumps({"error": {"message": "the script has no more replies"}})
            reply = self.replies.popleft()
        if isinstance(reply, tuple):
            return reply
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
            "usage": USAGE,
        }
        return 200, json.dumps(completion)


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                status, text = 404, '{"error": "not found"}'
            else:
                status, text = model.respond(body, dict(self.headers.items()))
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
