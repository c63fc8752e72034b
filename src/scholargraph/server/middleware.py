"""ASGI middleware: host check, cross-site request refusal, authentication, body limits, headers.

Outermost first: headers -> catch-all (500 with an incident id) -> host check -> (CORS, when configured) -> origin check -> auth ->
body limit -> the app. Refusals carry a bare status word, never a reason a caller could probe.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from ..config import ServerSettings
from .security import ADMIN, FailureThrottle, KeyRing, host_allowed, token_from_header, token_id

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("scholargraph.server")

UPLOAD_PATH = "/api/uploads"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
CSP = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
       "frame-src 'self' blob:; object-src 'self' blob:; worker-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")


async def send_status(send: Send, status: int, word: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": word}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


class SecurityHeaders:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith(("/api/", "/v1/"))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                            (b"x-frame-options", b"DENY"), (b"content-security-policy", CSP.encode())]
                if api and not any(k == b"cache-control" for k, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class CatchAll:
    """Any unexpected exception becomes ``500 {"error": "internal error", "incident": ID}``; the
    traceback goes to the server log under that id, never to the client."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception:  # noqa: BLE001 - the point of this middleware
            incident = uuid.uuid4().hex[:12]
            log.exception("internal error %s on %s %s", incident, scope.get("method"), scope.get("path"))
            if not started:
                body = json.dumps({"error": "internal error", "incident": incident}).encode()
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})


class HostCheck:
    """A loopback server answers only to loopback host names (no DNS rebinding from a web page)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings):
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not host_allowed(_header(scope, b"host"), self.settings):
            await send_status(send, 400, "bad request")
            return
        await self.app(scope, receive, send)


class OriginCheck:
    """Refuse state-changing requests that a browser sends on behalf of another site (CSRF): their
    ``Origin`` names another host, or ``Sec-Fetch-Site`` says cross-site. CORS origins are allowed."""

    def __init__(self, app: ASGIApp, settings: ServerSettings):
        self.app = app
        self.allowed = {o.rstrip("/").lower() for o in settings.cors_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS and self._cross_site(scope):
            await send_status(send, 403, "forbidden")
            return
        await self.app(scope, receive, send)

    def _cross_site(self, scope: Scope) -> bool:
        origin = _header(scope, b"origin")
        if origin and origin != "null":
            if origin.rstrip("/").lower() in self.allowed:
                return False
            return urlsplit(origin).netloc.lower() != (_header(scope, b"host") or "").lower()
        if origin == "null":
            return True
        return (_header(scope, b"sec-fetch-site") or "").lower() == "cross-site"


class Auth:
    """With keys configured every route needs one (the app, its assets and /openapi.json too):
    401 without a valid key, 403 for a read-only key on an admin route (checked by the route).
    Wrong keys are throttled per client address: after a few, 429 with ``Retry-After`` (a bounded
    back-off, :class:`FailureThrottle`), for the right key too until the wait is over. The key's id
    (``state["key_id"]``) scopes what belongs to a key, such as conversation sessions."""

    def __init__(self, app: ASGIApp, keys: KeyRing, throttle: FailureThrottle | None = None):
        self.app = app
        self.keys = keys
        self.throttle = throttle or FailureThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        if not self.keys.configured:
            state["role"], state["key_id"] = ADMIN, None  # loopback-only single-user mode
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown",))[0]
        token = token_from_header(_header(scope, b"authorization"))
        role = self.keys.role_for(token)
        waiting = self.throttle.wait(client)
        if role is None and token:  # a browser's first request, without any key, is no guess
            self.throttle.failed(client)
        if waiting:  # even the right key waits its turn: guessing meanwhile gains nothing
            wait = str(max(1, self.throttle.wait(client))).encode()
            await send_status(send, 429, "too many requests", [(b"retry-after", wait)])
            return
        if role is None:
            await send_status(send, 401, "unauthorized", [(b"www-authenticate", b'Basic realm="scholargraph", charset="UTF-8"'),
                                                          (b"www-authenticate", b'Bearer realm="scholargraph"')])
            return
        self.throttle.succeeded(client)
        state["role"], state["key_id"] = role, token_id(token or "")
        await self.app(scope, receive, send)


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Caps request bodies: uploads at the unpacked-size limit, everything else at ``max_body_kb``.
    A declared Content-Length over the cap is refused before reading; a streamed body is counted
    and stops with :class:`BodyTooLarge` (answered 413 by the app's handler)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings):
        self.app = app
        self.upload_limit = int(settings.max_unpacked_mb * 1024 * 1024) + 1024 * 1024
        self.limit = settings.max_body_kb * 1024

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_limit if scope["path"] == UPLOAD_PATH else self.limit
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await send_status(send, 413, "request body too large")
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return message

        await self.app(scope, counted, send)
