"""A small OpenAI-compatible server for driving real benchmark clients in tests.

`/v1/models`, `/v1/completions` and `/v1/chat/completions` (streamed as server-sent
events or whole), `/health`. Each output token takes `token_delay` seconds, the first
one `first_token_delay` more, so a client measures latencies the test chose. Token
counts come back in `usage`, as vLLM reports them.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MAX_TOKENS = 16


@dataclass
class ServerConfig:
    model: str = "test-model"
    token_delay: float = 0.01
    first_token_delay: float = 0.0
    served: list[dict[str, Any]] = field(default_factory=list)


def _prompt_tokens(body: dict[str, Any]) -> int:
    if "messages" in body:
        text = " ".join(
            part.get("text", "") if isinstance(part, dict) else str(part)
            for message in body["messages"]
            for part in (
                message.get("content")
                if isinstance(message.get("content"), list)
                else [message.get("content") or ""]
            )
        )
    else:
        prompt = body.get("prompt", "")
        text = " ".join(prompt) if isinstance(prompt, list) else str(prompt)
    return max(1, len(text.split()))


class _Handler(BaseHTTPRequestHandler):
    config: ServerConfig
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            model = {"id": self.config.model, "object": "model", "owned_by": "infx-tests"}
            return self._json(200, {"object": "list", "data": [model]})
        if self.path == "/health":
            return self._json(200, {})
        return self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return self._json(400, {"error": {"message": "body is not JSON"}})
        if self.path == "/v1/chat/completions":
            chat = True
        elif self.path == "/v1/completions":
            chat = False
        else:
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        tokens = int(
            body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        )
        prompt = _prompt_tokens(body)
        self.config.served.append({"path": self.path, "tokens": tokens, "prompt": prompt})
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": tokens,
            "total_tokens": prompt + tokens,
        }
        ident = f"cmpl-{len(self.config.served)}"
        kind = "chat.completion" if chat else "text_completion"
        if not body.get("stream"):
            time.sleep(self.config.first_token_delay + tokens * self.config.token_delay)
            text = " tok" * tokens
            choice = (
                {"index": 0, "message": {"role": "assistant", "content": text}}
                if chat
                else {"index": 0, "text": text}
            )
            choice["finish_reason"] = "length"
            payload = {
                "id": ident,
                "object": kind,
                "created": int(time.time()),
                "model": self.config.model,
                "choices": [choice],
                "usage": usage,
            }
            return self._json(200, payload)
        self._stream(body, chat, tokens, usage, ident)

    def _stream(
        self, body: dict[str, Any], chat: bool, tokens: int, usage: dict[str, int], ident: str
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        kind = "chat.completion.chunk" if chat else "text_completion"

        def send(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
            chunk = {
                "id": ident,
                "object": kind,
                "created": int(time.time()),
                "model": self.config.model,
                "choices": choices,
                **(extra or {}),
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        time.sleep(self.config.first_token_delay)
        for i in range(tokens):
            time.sleep(self.config.token_delay)
            finish = "length" if i == tokens - 1 else None
            if chat:
                delta = {"content": " tok"}
                if i == 0:
                    delta["role"] = "assistant"
                send([{"index": 0, "delta": delta, "finish_reason": finish}])
            else:
                send([{"index": 0, "text": " tok", "finish_reason": finish}])
        if (body.get("stream_options") or {}).get("include_usage"):
            send([], {"usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class OpenAIServer:
    """`with OpenAIServer(token_delay=0.02) as server:` then point a client at `server.url`."""

    def __init__(self, **config: Any) -> None:
        self.config = ServerConfig(**config)
        handler = type("BoundHandler", (_Handler,), {"config": self.config})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> OpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
