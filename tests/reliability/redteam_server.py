"""What the server red-team tests share: a real server (uvicorn on a loopback port) over the
scripted LLM and embeddings, with the offline extraction profile, and a client for it."""

from __future__ import annotations

from pathlib import Path

import httpx

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
