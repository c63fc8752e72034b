"""Commands that run something besides the workspace: `serve` (HTTP API and web app), `keygen`,
`llm serve` (a local GGUF model) and `demo`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config import demo_corpus_override, load_settings, program_name
from ..errors import ConfigError, WorkspaceError
from ..kb import KnowledgeBase
from . import output as show
from .flags import settings_flags
from .workspace import command_workspace


def add_serve_and_keygen(sub: Any) -> None:
    p = sub.add_parser("serve", help="HTTP API and web app (loopback by default; other addresses need API keys)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8765)")
    p.add_argument("--key-file", help="file of hashed API keys (see `scholargraph keygen`)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--create", action="store_true",
                   help="create the workspace when there is none (default: stop with exit code 4)")
    settings_flags(p)
    p.set_defaults(handler=cmd_serve)
    p = sub.add_parser("keygen", help="create an API key for `serve` and append its hash to a key file")
    p.add_argument("--key-file", required=True, help="file to append the hashed key to (created if missing)")
    p.add_argument("--read-only", action="store_true", help="a key that may read and ask, but not change anything")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_keygen)


def add_llm(sub: Any) -> None:
    p = sub.add_parser("llm", help="serve a GGUF model with llama.cpp on loopback (pip install 'scholargraph[local]')")
    p.add_argument("action", choices=["serve"], help="serve: run the model's OpenAI-compatible server until Ctrl-C")
    p.add_argument("model_file", help="a GGUF model file")
    p.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    p.add_argument("--threads", type=int, help="CPU threads (default: every usable core)")
    p.add_argument("--slots", type=int, help="requests run at once (default: one per four cores, at least one)")
    p.add_argument("--context", type=int, default=8192, help="context tokens per slot (default 8192)")
    p.add_argument("--alias", help="the model name it serves (default: the file name without .gguf)")
    p.set_defaults(handler=cmd_llm)


def add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="index a bundled real corpus and answer a few questions")
    p.add_argument("--corpus", help="directory of papers to use instead of the default demo corpus")
    settings_flags(p)
    p.set_defaults(handler=cmd_demo)


def cmd_serve(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..server import run_server
    from ..server.security import check_bind, load_keys

    settings = load_settings(args.workdir, overrides)
    check_bind(settings.server.host, load_keys(settings.server))  # a refused address first, as before
    if not args.create:  # like every command but index: no workspace is made by mistake
        try:
            KnowledgeBase(settings=settings, create=False).close()
        except WorkspaceError as exc:
            raise WorkspaceError(f"{exc}, or `scholargraph serve --create` to serve an empty library to upload "
                                 "papers into") from None
    run_server(settings, args.log_level)
    return 0


def cmd_llm(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``llm serve FILE.gguf``: llama.cpp's OpenAI-compatible server on loopback until Ctrl-C."""
    from ..llm.local_server import plan_server, serve

    plan = plan_server(Path(args.model_file).expanduser(), port=args.port, threads=args.threads, slots=args.slots,
                       context_per_slot=args.context, alias=args.alias)
    show.err.print(f"serving {plan.model_path.name} as '{plan.alias}' at {plan.base_url} ({plan.threads} threads, "
                   f"{plan.slots} slot(s) of {plan.context_per_slot} tokens); Ctrl-C stops it.\n"
                   f"Use it: --llm-url {plan.base_url} --llm-model {plan.alias}")
    serve(plan)
    return 0


def cmd_keygen(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..server.security import ADMIN, READ, generate_key, key_file_line

    role = READ if args.read_only else ADMIN
    key = generate_key()
    path = Path(args.key_file)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(key_file_line(key, role) + "\n")
        path.chmod(0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write the key file {path}: {exc.strerror}") from None
    if args.json:
        show.print_json({"key": key, "role": role, "key_file": str(path)})
    else:
        show.out.print(f"{role} key (shown once; only its hash is stored in {path}):\n{key}")
    return 0


def cmd_demo(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..demo import demo_corpus, next_steps, questions_for

    corpus = demo_corpus(args.corpus, demo_corpus_override())
    workdir = args.workdir or "demo_workspace"
    show.out.print(f"[bold]scholargraph demo[/bold]: indexing {show.escape(corpus.describe())} into {workdir}/")
    with command_workspace(args, overrides, workdir, create=True) as kb:
        report = kb.insert(corpus.paths)
        show.print_index_report(report)
        if not report.ok and not kb.status():
            return 1
        top = [e.name for e in kb.entities(limit=3)] if not corpus.bundled else []
        for question in questions_for(corpus, top):
            show.out.print(f"\n[bold cyan]Q: {show.escape(question)}[/bold cyan]")
            show.print_answer(kb.query(question), streamed=False)
        llm = kb.settings.llm.configured
    if not llm:
        show.out.print("\n(no LLM configured: the answers above are the best-matching sentences, each cited)")
    program = program_name(sys.argv[0])
    activate = (f" (or first `. {Path(program).parent}/activate`, then plain `scholargraph`)"
                if program != "scholargraph" else "")
    show.out.print(f"\n[bold]workspace:[/bold] {Path(workdir).resolve()}\n[bold]next, try{activate}:[/bold]")
    for command, what in next_steps(workdir, corpus, llm, program):
        show.out.print(f"  {show.escape(command)}\n      [dim]{show.escape(what)}[/dim]")
    return 0 if report.ok else 1
