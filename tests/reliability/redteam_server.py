"""What the server red-team tests share: a real server (uvicorn on a loopback port) over the
scripted LLM and embeddings, with the offline extraction profile, and a client for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from redteam import MODEL, scripted_env

from scholargraph.config import load_settings
from scholargraph.server.serve import ServerThread
from scholargraph.testing.llm_server import ScriptedLLMServer

ADMIN_KEY = "sg-admin-key-for-the-red-team-0123456789"
READ_KEY = "sg-read-key-for-the-red-team-0123456789"
PAPER_A = b"# Graph retrieval\n\nGraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves neighbours."
PAPER_B = b"# Contrastive learning\n\nContrastive Learning improves Sentence Embeddings on the STS Benchmark."


def serve(workdir: Path, llm: ScriptedLLMServer, **sections) -> ServerThread:
    settings = {"progress": False, "server": {"port": 0, **sections.pop("server", {})},
                "llm": {"base_url": llm.base_url, "model": "scripted-model", "timeout": 10, "retries": 1,
                        "backoff_base": 0.01, "backoff_max": 0.05},
                "embeddings": {"provider": "openai", "base_url": llm.base_url, "model": "scripted-embedding",
                               "dimension": 64},
                "extraction": {"profile": "offline"}, "chunking": {"size": 64, "overlap": 8}, **sections}
    return ServerThread(load_settings(workdir, settings)).start()


def http(server: ServerThread, key: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=120)


def upload(client: httpx.Client, name: str, data: bytes, wait: float = 0) -> httpx.Response:
    return client.post(f"/api/uploads?wait={wait}", files=[("files", (name, data, "text/markdown"))])


def finished(client: httpx.Client, job_id: str, within: float = 900.0) -> dict:
    """The job once it has ended: asked again every 30 s for up to ``within`` seconds (on a busy
    machine a small index job can take minutes)."""
    deadline = time.monotonic() + within
    while True:
        response = client.get(f"/api/jobs/{job_id}?wait=30")
        assert response.status_code in (200, 202), response.text
        job = response.json()["job"]
        if job["status"] in ("done", "failed") or time.monotonic() > deadline:
            return job


def serve_process(workdir: Path, llm: ScriptedLLMServer) -> tuple[subprocess.Popen, str]:
    """`scholargraph serve` in its own process (to be killed), once it answers; (process, url)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, **scripted_env(llm), "SCHOLARGRAPH_EXTRACTION__PROFILE": "offline"}
    process = subprocess.Popen([sys.executable, "-m", "scholargraph.cli", "serve", "--create", "-w", str(workdir), "--port",
                                str(port), "--llm-url", llm.base_url, "--llm-model", MODEL, "--log-level", "warning"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "/api/info", timeout=5).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"scholargraph serve did not start (exit {process.poll()})")
