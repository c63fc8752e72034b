"""A GGUF model served on loopback by llama.cpp's own OpenAI-compatible server (the optional
``xllamacpp`` package: ``pip install 'scholargraph[local]'``), so a laptop with a model file needs
no Ollama.

* :func:`plan_server` chooses threads, slots and context for this machine;
* :func:`serve` runs the server in this process until SIGINT/SIGTERM (``scholargraph llm serve``);
* :class:`LocalServer` runs it as a child process (``llm.base_url = "local:PATH.gguf"`` and the
  benchmarks), waits until it serves and stops it by its own pid.

llama.cpp splits ``n_ctx`` between its slots: the plan asks for ``context_per_slot x slots``.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from ..config import LOCAL_MODEL_PREFIX
from ..errors import LLMUnavailableError

DEFAULT_CONTEXT_PER_SLOT = 8192
SHUTDOWN_GRACE = 5.0  # seconds a stopped server waits for llama.cpp to stop before the process ends


@dataclass(frozen=True)
class ServerPlan:
    """How one llama.cpp server is started."""

    model_path: Path
    port: int
    threads: int
    slots: int
    context_per_slot: int
    alias: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def argv(self) -> list[str]:
        """The command line that runs this plan with :func:`serve` in a child process."""
        return [sys.executable, "-m", "scholargraph.llm.local_server", str(self.model_path), "--port", str(self.port),
                "--threads", str(self.threads), "--slots", str(self.slots), "--context", str(self.context_per_slot),
                "--alias", self.alias]


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def model_path_of(base_url: str) -> Path | None:
    """The GGUF path of a ``local:PATH.gguf`` base URL, else None."""
    if not base_url.startswith(LOCAL_MODEL_PREFIX):
        return None
    return Path(base_url[len(LOCAL_MODEL_PREFIX):]).expanduser()


def plan_server(model_path: Path, *, port: int | None = None, threads: int | None = None, slots: int | None = None,
                context_per_slot: int = DEFAULT_CONTEXT_PER_SLOT, alias: str | None = None) -> ServerPlan:
    """Threads = the usable cores; one slot per four of them (one on a laptop-sized CPU): on a CPU a
    second slot halves each request's speed and adds nothing to throughput, and queued requests
    wait in the client, where their timeouts don't run."""
    cpus = usable_cpus()
    return ServerPlan(Path(model_path), port or free_port(), threads or cpus, slots or max(1, min(4, cpus // 4)),
                      context_per_slot, alias or Path(model_path).stem)


def _check_model_file(path: Path) -> None:
    if not path.is_file():
        raise LLMUnavailableError(f"local model file not found: {path}")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise LLMUnavailableError(f"{path} is not a GGUF model file (llama.cpp reads only GGUF)")


def _import_xllamacpp():
    try:
        import xllamacpp
    except ImportError as exc:
        raise LLMUnavailableError(
            "a local: model needs llama.cpp's Python server: pip install 'scholargraph[local]' (xllamacpp)") from exc
    return xllamacpp


def serve(plan: ServerPlan, stop: threading.Event | None = None, *, shutdown_grace: float = SHUTDOWN_GRACE) -> None:
    """Run llama.cpp's server for ``plan`` in this process until ``stop`` is set or SIGINT/SIGTERM.

    In the main thread the process is the server's: after a stop it exits within ``shutdown_grace``
    seconds even when llama.cpp's own shutdown waits for a reply still being generated (minutes on a
    busy CPU), so a stopped or orphaned server never keeps the model and the CPU."""
    _check_model_file(plan.model_path)
    xllamacpp = _import_xllamacpp()
    params = xllamacpp.CommonParams()
    params.model.path = str(plan.model_path)
    params.n_ctx = plan.context_per_slot * plan.slots
    params.n_parallel = plan.slots
    params.port = plan.port
    params.hostnames = ["127.0.0.1"]
    params.cpuparams.n_threads = plan.threads
    params.cpuparams_batch.n_threads = plan.threads
    params.model_alias = {plan.alias}
    stop = stop or threading.Event()
    owns_process = threading.current_thread() is threading.main_thread()
    if owns_process:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        if owns_process:
            _exit_after(shutdown_grace)
        del server  # its destructor stops llama.cpp's threads (after the reply in progress)


def _exit_after(seconds: float) -> None:
    """End this process in ``seconds`` whatever is still running in it (main thread only).

    A timer thread ends it with status 0; the kernel's alarm ends it a second later in case the
    timer cannot run: stopped while the model was loading, xllamacpp's ``Server`` destructor was
    seen joining a llama.cpp thread forever while holding the interpreter lock."""
    timer = threading.Timer(seconds, os._exit, args=(0,))
    timer.daemon = True
    timer.start()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # default action: the kernel ends the process
    signal.alarm(math.ceil(seconds) + 1)


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM when its parent dies (even by kill -9), so no server is left
    holding the model in memory; elsewhere nothing."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def wait_until_serving(base_url: str, timeout: float, alive=lambda: True) -> None:
    """Poll ``/v1/models`` until it answers 200 (llama.cpp answers 503 while loading)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if not alive():
            raise LLMUnavailableError(f"the local model server stopped while loading ({last})")
        try:
            response = httpx.get(f"{base_url}/models", timeout=5.0)
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(0.5)
    raise LLMUnavailableError(f"the local model server at {base_url} did not serve within {timeout:.0f} s ({last})")


class LocalServer:
    """llama.cpp serving ``plan`` in a child process; a context manager. Its log goes to ``log_path``
    (or is discarded)."""

    def __init__(self, plan: ServerPlan, log_path: Path | None = None, nice: int = 0, start_timeout: float = 300.0):
        self.plan = plan
        self.log_path = log_path
        self.nice = nice
        self.start_timeout = start_timeout  # seconds to load the model (``with``)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return self.plan.base_url

    def start(self, timeout: float = 300.0) -> LocalServer:
        _check_model_file(self.plan.model_path)
        _import_xllamacpp()
        log: IO[bytes] | int = self.log_path.open("ab") if self.log_path else subprocess.DEVNULL
        nice = self.nice

        def prepare_child() -> None:  # runs in the child before exec
            _die_with_parent()
            if nice:
                os.nice(nice)

        self.process = subprocess.Popen(self.plan.argv(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=prepare_child)
        if not isinstance(log, int):
            log.close()
        try:
            wait_until_serving(self.base_url, timeout, alive=lambda: self.process is not None and self.process.poll() is None)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, grace: float = 15.0) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> LocalServer:
        return self.start(self.start_timeout)

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_for(base_url: str, model: str | None, log_path: Path | None) -> LocalServer:
    """Start the server a ``local:PATH.gguf`` base URL names (its model served as ``model``, or the
    file's stem)."""
    path = model_path_of(base_url)
    if path is None:
        raise ValueError(f"not a local: model URL: {base_url}")
    return LocalServer(plan_server(path, alias=model or path.stem), log_path=log_path).start()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m scholargraph.llm.local_server",
                                     description="Serve a GGUF model on loopback (OpenAI-compatible).")
    parser.add_argument("model", type=Path)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--slots", type=int)
    parser.add_argument("--context", type=int, default=DEFAULT_CONTEXT_PER_SLOT, help="tokens per slot")
    parser.add_argument("--alias", help="the model name it serves (default: the file's stem)")
    args = parser.parse_args(argv)
    plan = plan_server(args.model, port=args.port, threads=args.threads, slots=args.slots,
                       context_per_slot=args.context, alias=args.alias)
    with contextlib.suppress(KeyboardInterrupt):
        serve(plan)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
