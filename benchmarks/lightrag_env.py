"""Create (or reuse) the separate virtual environment in which LightRAG runs for the comparison.

    .venv/bin/python -m benchmarks.lightrag_env [--venv benchmarks/.lightrag-venv] [--force]

What it does, each step only when needed (it is idempotent and prints what it did):

1. ``python3 -m venv benchmarks/.lightrag-venv`` (gitignored; never commit it or LightRAG's code).
2. ``pip install`` the pinned packages below. LightRAG's core dependencies pull no torch/CUDA;
   ``openai`` is added because LightRAG's own OpenAI-compatible LLM binding imports it (LightRAG
   would otherwise try to pip-install it at import time via ``pipmaster``).
3. tiktoken downloads its encodings at run time, which fails offline. ``toktok-rs`` compiles the
   o200k_base and cl100k_base vocabularies into its extension module; this step writes them out
   in tiktoken's file format (``base64(token bytes) rank`` per line) into
   ``<venv>/tiktoken-cache/<sha1 of the blob URL>``, and checks each file's sha256 against the
   hash tiktoken itself expects (read from ``tiktoken_ext.openai_public`` in that venv).
4. Verifies ``tiktoken.get_encoding(...)`` loads offline: ``TIKTOKEN_CACHE_DIR`` set and every
   HTTP(S) proxy pointed at a closed port, so any download attempt would fail.

The venv's python, the cache dir and the installed versions are written to
``<venv>/scholargraph-env.json``; :func:`ensure` returns the same dictionary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = HERE / ".lightrag-venv"

LIGHTRAG_VERSION = "1.5.7"
PINNED = [
    f"lightrag-hku=={LIGHTRAG_VERSION}",
    "openai==2.54.0",  # LightRAG's OpenAI binding needs it (its [api] extra asks for openai>=2,<3)
    "toktok-rs==0.3.0",  # ships the o200k_base / cl100k_base ranks; see step 3
]
ENCODINGS = ("o200k_base", "cl100k_base")
DEAD_PROXY = "http://127.0.0.1:9"  # discard port: nothing listens, so any download fails fast

# Runs inside the LightRAG venv: write toktok's ranks as tiktoken cache files, check the hashes.
_WRITE_CACHE = textwrap.dedent(
    """
    import base64, hashlib, json, os, sys
    import tiktoken_ext.openai_public as public
    import toktok

    cache_dir, names = sys.argv[1], sys.argv[2:]
    os.makedirs(cache_dir, exist_ok=True)
    seen = {}

    def capture(blobpath, expected_hash=None):  # stands in for tiktoken's loader: records the source
        seen["blob"], seen["hash"] = blobpath, expected_hash
        return {}

    public.load_tiktoken_bpe = capture
    out = {}
    for name in names:
        seen.clear()
        getattr(public, name)()
        blob, expected = seen["blob"], seen["hash"]
        path = os.path.join(cache_dir, hashlib.sha1(blob.encode()).hexdigest())
        status = "present"
        if not (os.path.exists(path) and hashlib.sha256(open(path, "rb").read()).hexdigest() == expected):
            tokens = toktok._encoding(name).token_byte_values()
            data = b"".join(base64.b64encode(bytes(t)) + b" " + str(rank).encode() + b"\\n" for rank, t in enumerate(tokens))
            digest = hashlib.sha256(data).hexdigest()
            if expected and digest != expected:
                sys.exit(f"{name}: sha256 {digest} != tiktoken's expected {expected}")
            with open(path + ".tmp", "wb") as fh:
                fh.write(data)
            os.replace(path + ".tmp", path)
            status = "written"
        out[name] = {"blob": blob, "file": path, "sha256": expected, "status": status}
    print(json.dumps(out))
    """
)

_VERIFY = textwrap.dedent(
    """
    import json, sys, tiktoken, importlib.metadata as md
    out = {}
    for name in sys.argv[1:]:
        enc = tiktoken.get_encoding(name)
        out[name] = {"n_vocab": enc.n_vocab, "hello_world": enc.encode("hello world")}
    out["gpt-4o-mini"] = tiktoken.encoding_for_model("gpt-4o-mini").name
    out["versions"] = {p: md.version(p) for p in ("lightrag-hku", "tiktoken", "openai", "toktok-rs")}
    import lightrag
    out["lightrag_module"] = lightrag.__file__
    print(json.dumps(out))
    """
)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def cache_dir(venv: Path) -> Path:
    return venv / "tiktoken-cache"


def offline_env(venv: Path) -> dict[str, str]:
    """Environment for running in the LightRAG venv with tiktoken offline and no way out."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["TIKTOKEN_CACHE_DIR"] = str(cache_dir(venv))
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[var] = DEAD_PROXY
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"  # the scripted server stays reachable
    return env


def _run(cmd: list[str], env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def _installed(py: Path) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as md\n"
        "out = {}\n"
        f"for spec in {PINNED!r}:\n"
        "    name = spec.split('==')[0]\n"
        "    try: out[name] = md.version(name)\n"
        "    except md.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    return json.loads(_run([str(py), "-c", code]))


def ensure(venv: Path = DEFAULT_VENV, force: bool = False, log=print) -> dict[str, Any]:
    venv = venv.resolve()
    py = venv_python(venv)
    if force or not py.exists():
        log(f"creating venv {venv}")
        _run([sys.executable, "-m", "venv", "--clear", str(venv)])  # from a venv: based on its base python
    else:
        log(f"reusing venv {venv}")

    wanted = {spec.split("==")[0]: spec.split("==")[1] for spec in PINNED}
    have = _installed(py)
    missing = [f"{n}=={v}" for n, v in wanted.items() if have.get(n) != v]
    if missing:
        log(f"pip install {' '.join(missing)}  (all pinned: {' '.join(PINNED)})")
        _run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *PINNED])
        have = _installed(py)
        still = [n for n, v in wanted.items() if have.get(n) != v]
        if still:
            raise SystemExit(f"pinned packages not installed as asked: {still} (have {have})")
    else:
        log(f"pinned packages already installed: {' '.join(PINNED)}")
    torch = subprocess.run([str(py), "-c", "import torch"], capture_output=True).returncode == 0
    log(f"torch in the LightRAG venv: {'yes' if torch else 'no (not needed by LightRAG core)'}")

    cdir = cache_dir(venv)
    cache = json.loads(_run([str(py), "-c", _WRITE_CACHE, str(cdir), *ENCODINGS]))
    for name, info in cache.items():
        log(f"tiktoken cache {name}: {info['status']} {info['file']} (sha256 {info['sha256'][:12]}… matches tiktoken's)")

    check = json.loads(_run([str(py), "-c", _VERIFY, *ENCODINGS], env=offline_env(venv)))
    log(f"tiktoken offline check (TIKTOKEN_CACHE_DIR={cdir}, proxies -> {DEAD_PROXY}): "
        + ", ".join(f"{n} n_vocab={check[n]['n_vocab']}" for n in ENCODINGS)
        + f"; gpt-4o-mini -> {check['gpt-4o-mini']}")
    info = {
        "venv": str(venv),
        "python": str(py),
        "tiktoken_cache_dir": str(cdir),
        "pinned": PINNED,
        "versions": check["versions"],
        "torch_installed": torch,
        "tiktoken_cache": cache,
        "tiktoken_check": {n: check[n] for n in ENCODINGS},
        "lightrag_module": check["lightrag_module"],
    }
    (venv / "scholargraph-env.json").write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--force", action="store_true", help="recreate the venv from scratch")
    args = ap.parse_args(argv)
    info = ensure(args.venv, force=args.force)
    print(json.dumps({k: info[k] for k in ("python", "tiktoken_cache_dir", "versions", "torch_installed")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
