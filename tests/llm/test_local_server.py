"""Serving a GGUF file (``local:PATH.gguf``, ``scholargraph llm serve``): the plan and the errors a
user can cause. Starting llama.cpp itself is measured in benchmarks (benchmarks/local_model.py)."""

from __future__ import annotations

import pytest

from scholargraph.config import LLMSettings
from scholargraph.errors import LLMUnavailableError
from scholargraph.llm.local_server import LocalServer, model_path_of, plan_server


def test_local_urls_name_a_model_file(tmp_path):
    settings = LLMSettings(base_url=f"local:{tmp_path}/m.gguf")
    assert settings.local_model and settings.configured  # the model name comes from the file
    assert model_path_of(settings.base_url) == tmp_path / "m.gguf"
    assert model_path_of("http://localhost:8080/v1") is None


def test_an_empty_local_url_is_refused():
    with pytest.raises(ValueError, match="GGUF model file"):
        LLMSettings(base_url="local:")


def test_the_plan_fits_the_machine(tmp_path):
    plan = plan_server(tmp_path / "qwen.gguf", port=9000)
    assert plan.threads >= 1 and plan.slots >= 1 and plan.alias == "qwen"
    assert plan.base_url == "http://127.0.0.1:9000/v1"
    assert plan.argv()[-2:] == ["--alias", "qwen"]


def test_a_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(LLMUnavailableError, match="not found"):
        LocalServer(plan_server(tmp_path / "nope.gguf")).start()


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"<html>not a model</html>")
    with pytest.raises(LLMUnavailableError, match="not a GGUF"):
        LocalServer(plan_server(fake)).start()


def test_a_local_model_in_a_knowledge_base_fails_clearly_before_any_work(tmp_path):
    from scholargraph import KnowledgeBase

    with KnowledgeBase(tmp_path / "ws", llm={"base_url": f"local:{tmp_path}/absent.gguf"},
                       extraction={"profile": "academic"}) as kb, pytest.raises(LLMUnavailableError, match="not found"):
        kb.insert(texts=["GraphRAG builds a knowledge graph."])
    with KnowledgeBase(tmp_path / "ws") as kb:
        assert kb.stats().documents == 0  # nothing half-indexed


FAKE_XLLAMACPP = '''
import pathlib, sys, time


class _Bag:
    def __init__(self):
        self.model = type("M", (), {})()
        self.cpuparams = type("C", (), {})()
        self.cpuparams_batch = type("C", (), {})()


CommonParams = _Bag


class Server:
    """Serves at once; stopping waits for the request in progress, which never ends (a starved CPU)."""

    def __init__(self, params):
        pathlib.Path(sys.argv[-1]).write_text("serving")

    def __del__(self):
        time.sleep(3600)
'''


def test_a_stopped_server_exits_even_while_llama_cpp_is_still_generating(tmp_path):
    # Real run: the bench's parent was killed during a long generation on a loaded CPU; the server got
    # SIGTERM (parent death) but its llama.cpp shutdown waited for the reply, and it kept the model and
    # the CPU for minutes after nobody could use it.
    assert _serve_then_stop(tmp_path, FAKE_XLLAMACPP) == 0


def test_a_stopped_server_exits_even_when_llama_cpp_shutdown_holds_the_interpreter(tmp_path):
    # Real run (gdb on the orphan): stopped while the model loaded, xllamacpp's Server destructor sat in
    # std::thread::join() forever holding the GIL, so the Python timer meant to end the process never
    # ran and the server ignored every later SIGTERM, holding the model until killed by hand.
    holding = FAKE_XLLAMACPP.replace("        time.sleep(3600)", "        import ctypes; ctypes.PyDLL(None).sleep(3600)")
    assert holding != FAKE_XLLAMACPP
    assert _serve_then_stop(tmp_path, holding) is not None  # it ended (by the kernel's alarm if need be)


def _serve_then_stop(tmp_path, fake_xllamacpp: str) -> int | None:
    """serve() in a child process with ``fake_xllamacpp``; SIGTERM once it serves; its exit code
    (None: still running 60 s later, then killed)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    (tmp_path / "xllamacpp.py").write_text(fake_xllamacpp)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    ready = tmp_path / "ready"
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(src)])}
    code = "import sys; from scholargraph.llm.local_server import plan_server, serve; serve(plan_server(sys.argv[1]))"
    process = subprocess.Popen([sys.executable, "-c", code, str(model), str(ready)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert ready.exists()
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            return None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
