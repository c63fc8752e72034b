"""HTTP plumbing of :class:`scholargraph.testing.llm_server.ScriptedLLMServer`: the threaded
server and the OpenAI-compatible request handler."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import numpy as np

from ..llm.wire import messages_text
from .llm_script import Fault, InFlight, Reply

if TYPE_CHECKING:
    from .llm_server import ScriptedLLMServer

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
}
_PIECES = re.compile(r"\S+\s*|\s+")


def unit_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text`` (same text, same vector)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dim)
    return (vector / np.linalg.norm(vector)).round(7).tolist()


_WORD = re.compile(r"[a-z0-9]+")


def word_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector in which texts sharing words are similar (a bag of hashed
    lower-case words): lets tests exercise similarity thresholds without an embedding model."""
    vector = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        vector[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = np.linalg.norm(vector)
    return unit_vector(text, dim) if norm == 0 else (vector / norm).round(7).tolist()


def _encode(vector: list[float], encoding: str) -> list[float] | str:
    """``base64``: little-endian float32 bytes, as the OpenAI API sends them."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode() if encoding == "base64" else vector


class LLMHTTPServer(ThreadingHTTPServer):
    """One thread per connection (keep-alive), a deep accept backlog, and a stop() that also closes
    idle keep-alive connections instead of waiting for the clients to hang up."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: ScriptedLLMServer):
        self.app = app
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # the client went away (timeout, drop, stop()): not worth a traceback
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # buffered: headers and body leave in one segment (flushed per request / per event)
    disable_nagle_algorithm = True  # no delayed-ACK stalls on keep-alive connections
    server: LLMHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence per-request logging
        pass

    @property
    def app(self) -> ScriptedLLMServer:
        return self.server.app

    # -- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._authorized():
            return
        if _route(self.path) == "/models" and self.app.serve_models_endpoint:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self.app.models]
            self._send_json(200, {"object": "list", "data": data})
        elif self.path in ("/props", "/v1/props") and self.app.props is not None:  # llama.cpp's server
            self._send_json(200, self.app.props)
        elif _route(self.path) == "/_stats":  # for a server run in another process (benchmarks)
            stats = self.app.stats
            self._send_json(200, {**stats.to_json(), "mean_concurrency": stats.mean_concurrency(),
                                  "active_seconds": stats.active_seconds(),
                                  "concurrency_timeline": stats.concurrency_timeline()})
        elif _route(self.path) == "/_reset":
            self.app.stats.reset()
            self._send_json(200, {"reset": True})
        else:
            self._send_error_json(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        raw = self._read_body()  # always read it, or the keep-alive stream gets out of step
        if not self._authorized():
            return
        route = _route(self.path)
        if route not in ("/chat/completions", "/embeddings", "/rerank"):
            self._send_error_json(404, f"no route for POST {self.path}")
            return
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_error_json(400, f"request body is not valid JSON: {exc}")
            return
        if not isinstance(request, dict):
            self._send_error_json(400, "request body must be a JSON object")
            return
        if route == "/chat/completions":
            self._chat(request)
        elif route == "/rerank":
            self._rerank(request)
        else:
            self._embeddings(request)

    def _authorized(self) -> bool:
        key = self.app.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send_error_json(401, "Incorrect API key provided")
        return False

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    # -- endpoints ---------------------------------------------------------------------------
    def _chat(self, request: dict[str, Any]) -> None:
        flight = self.app.stats.begin_chat(request)
        try:
            fault = self.app.take_fault()
            if fault is not None and not self._apply_fault(fault, flight):
                return
            with self.app.working():  # waits its turn when the server works on few requests at once
                self._answer_chat(request, flight)
        finally:
            flight.end()

    def _answer_chat(self, request: dict[str, Any], flight: InFlight) -> None:
        app = self.app
        model = request.get("model")
        if app.strict_models and model not in app.models:
            kind, reply = "other", Reply(f'model "{model}" not found, try pulling it first', status=404)
        else:
            kind, reply = app.resolve(request)
        ok = reply.status == 200 and reply.raw_body is None
        prompt = app.count_tokens(messages_text(request.get("messages") or []))
        completion = app.count_tokens(reply.content) if ok else 0
        app.stats.count(kind, prompt, completion, ok)
        first, spread = app.delay_for(reply, prompt, completion)
        if ok and request.get("stream"):
            self._stream(request, reply, (prompt, completion), first, spread, flight)
            return
        time.sleep(first + spread)
        flight.end()
        headers = reply.headers or {}
        if reply.raw_body is not None:
            content_type = "text/event-stream" if request.get("stream") else "application/json"
            self._send_bytes(reply.status, reply.raw_body.encode(), content_type, headers)
        elif reply.status >= 400:
            self._send_error_json(reply.status, reply.content, headers)
        else:
            message = {"role": "assistant", "content": reply.content}
            body = _envelope(request, "chat.completion",
                             [{"index": 0, "message": message, "finish_reason": reply.finish_reason}])
            if reply.usage:
                body["usage"] = _usage(prompt, completion)
            self._send_json(reply.status, body, headers)

    def _stream(
        self,
        request: dict[str, Any],
        reply: Reply,
        tokens: tuple[int, int],
        first: float,
        spread: float,
        flight: InFlight,
    ) -> None:
        time.sleep(first)
        self.send_response(200)
        for name, value in {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
            **(reply.headers or {}),
        }.items():
            self.send_header(name, value)
        self.end_headers()
        self._event(_envelope(request, "chat.completion.chunk", [_delta({"role": "assistant", "content": ""})]))
        pieces = _PIECES.findall(reply.content)
        for piece in pieces:
            if spread:
                time.sleep(spread / len(pieces))
            self._event(_envelope(request, "chat.completion.chunk", [_delta({"content": piece})]))
        self._event(_envelope(request, "chat.completion.chunk", [_delta({}, reply.finish_reason)]))
        flight.end()
        if (request.get("stream_options") or {}).get("include_usage") and reply.usage:
            self._event({**_envelope(request, "chat.completion.chunk", []), "usage": _usage(*tokens)})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _embeddings(self, request: dict[str, Any]) -> None:
        app = self.app
        fault = app.take_fault()
        if fault is not None and not self._apply_fault(fault, None):
            return
        inputs = request.get("input")
        if not isinstance(inputs, (str, list)):
            self._send_error_json(400, "'input' must be a string or a list")
            return
        texts = [inputs] if isinstance(inputs, str) else [x if isinstance(x, str) else json.dumps(x) for x in inputs]
        if app.strict_models and request.get("model") not in app.models:
            self._send_error_json(404, f'model "{request.get("model")}" not found, try pulling it first')
            return
        dim = int(request.get("dimensions") or app.embedding_dim)
        app.stats.add("embedding_calls")
        app.stats.add("embedding_inputs", len(texts))
        time.sleep(app.embedding_latency)
        encoding = request.get("encoding_format") or "float"
        if encoding not in app.embedding_encodings:
            self._send_error_json(400, f"unsupported encoding_format {encoding!r}")
            return
        data = [{"object": "embedding", "index": i, "embedding": _encode(app.embedding_fn(t, dim), encoding)}
                for i, t in enumerate(texts)]
        tokens = sum(app.count_tokens(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(200, {"object": "list", "data": data, "model": request.get("model", ""), "usage": usage})

    def _rerank(self, request: dict[str, Any]) -> None:
        app = self.app
        fault = app.take_fault()
        if fault is not None and not self._apply_fault(fault, None):
            return
        query, docs = request.get("query"), request.get("documents")
        if not isinstance(query, str) or not isinstance(docs, list):
            self._send_error_json(400, "'query' must be a string and 'documents' a list")
            return
        texts = [d if isinstance(d, str) else str((d or {}).get("text", "")) for d in docs]
        app.stats.add("rerank_calls")
        app.stats.add("rerank_documents", len(texts))
        scores = [float(app.rerank_score(query, t)) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: -scores[i])[: int(request.get("top_n") or len(texts))]
        results = [{"index": i, "relevance_score": scores[i]} for i in order]
        self._send_json(200, {"model": request.get("model", ""), "results": results})

    def _apply_fault(self, fault: Fault, flight: InFlight | None) -> bool:
        """Act out an injected fault; True when the request should then be answered normally."""
        if fault.kind == "hang":
            time.sleep(fault.seconds)
            return True
        if flight is not None:
            flight.end()
        if fault.kind == "drop":
            self.close_connection = True  # the socket is closed with nothing written
            return False
        headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        if fault.body is not None:
            self._send_bytes(fault.status, fault.body.encode(), "application/json", headers)
        else:
            self._send_error_json(fault.status, f"injected failure (HTTP {fault.status})", headers)
        return False

    # -- writing -----------------------------------------------------------------------------
    def _send_bytes(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(data).encode(), "application/json", headers)

    def _send_error_json(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "code": status}
        self._send_json(status, {"error": error}, headers)

    def _event(self, data: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(data)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _route(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    return path.removeprefix("/v1")


def _envelope(request: dict[str, Any], obj: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
    model = request.get("model", "")
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": obj,
        "created": int(time.time()),
        "model": model,
        "choices": choices,
    }


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish_reason}


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
