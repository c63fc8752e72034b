"""Helpers of the server tests: start the real app under uvicorn on a free loopback port, read SSE."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from scholargraph.config import Settings, load_settings
from scholargraph.kb import KnowledgeBase
from scholargraph.server.serve import ServerThread


def server_settings(workdir: Path, llm_url: str | None = None, **overrides) -> Settings:
    """``overrides`` are settings sections (``server={...}``, ``extraction={...}``)."""
    settings = {"progress": False, "server": {"port": 0, **overrides.pop("server", {})}, **overrides}
    if llm_url:
        settings["llm"] = {"base_url": llm_url, "model": "scripted-model", "timeout": 10, "backoff_base": 0.01,
                           "backoff_max": 0.05, **settings.get("llm", {})}
        settings.setdefault("extraction", {}).setdefault("profile", "academic")
    return load_settings(workdir, settings)


def start_server(workdir: Path, llm_url: str | None = None, **overrides) -> ServerThread:
    return ServerThread(server_settings(workdir, llm_url, **overrides)).start()


def index_workspace(workdir: Path, papers: list[Path], llm_url: str | None = None, **overrides) -> None:
    """Index ``papers`` into ``workdir`` with the settings a server over it would have."""
    with KnowledgeBase(settings=server_settings(workdir, llm_url, **overrides)) as kb:
        report = kb.insert(papers)
        assert report.ok, report.to_json()


def client(server: ServerThread, key: str | None = None, **kwargs) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=120, **kwargs)


def sse_events(response: httpx.Response) -> list[tuple[str, object]]:
    """(event name, parsed data) of a server-sent event stream, read to its end."""
    out, name, data = [], None, []
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif not line and data:
            text = "\n".join(data)
            out.append((name, text if text == "[DONE]" else json.loads(text)))
            name, data = None, []
    return out


def upload(http: httpx.Client, *files: tuple[str, bytes, str], scope: str = "full", wait: float = 120) -> httpx.Response:
    return http.post(f"/api/uploads?wait={wait}", files=[("files", f) for f in files], data={"scope": scope})
