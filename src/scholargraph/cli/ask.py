"""Questions: `ask` (an answer with citations) and `retrieve` (the ranked evidence), one question
or a file of them."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import ConfigError, ScholarGraphError
from ..kb import KnowledgeBase
from ..plugins.registry import mode_names
from . import output as show
from .flags import settings_flags
from .workspace import command_workspace, read_queries, require_indexed


def add_ask_and_retrieve(sub: Any) -> None:
    for name, helptext in (("ask", "answer a question with citations"), ("retrieve", "show the ranked evidence for a question")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("question", nargs="?", help="the question (or use --queries FILE)")
        p.add_argument("--mode", "-m", help=" | ".join(mode_names()))
        p.add_argument("--top-k", "-k", type=int)
        p.add_argument("--queries", help="file with one question per line, or JSONL with a 'question' field")
        p.add_argument("--no-clues", action="store_true", help="ablation: keywords without corpus clues")
        p.add_argument("--no-subgraph", action="store_true", help="ablation: one-hop neighbours instead of the subgraph")
        if name == "ask":
            p.add_argument("--session", help="conversation name: follow-up questions see earlier turns")
            p.add_argument("--no-stream", action="store_true", help="print the answer when complete")
            p.add_argument("--only-context", action="store_true", help="print the numbered context; no LLM call")
        settings_flags(p)
        p.set_defaults(handler=cmd_ask if name == "ask" else cmd_retrieve)


def _questions(args: argparse.Namespace) -> list[str]:
    if args.queries:
        return read_queries(args.queries)
    if args.question is None:
        raise ConfigError("give a question, or --queries FILE")
    if not args.question.strip():
        raise ConfigError("the question is empty")
    return [args.question]


def cmd_ask(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    questions = _questions(args)
    with command_workspace(args, overrides) as kb:
        require_indexed(kb)
        return kb.run(_ask_all(kb, args, questions))


def _print_piece(piece: str) -> None:
    sys.stdout.write(piece)
    sys.stdout.flush()


async def _ask_all(kb: KnowledgeBase, args: argparse.Namespace, questions: list[str]) -> int:
    failures = 0
    batch = bool(args.queries)
    for question in questions:
        if args.only_context:
            retrieval = await kb.aretrieve(question, args.mode, args.top_k, clues=not args.no_clues,
                                           subgraph=not args.no_subgraph)
            data = {**retrieval.to_json(), "context": retrieval.context}
            show.print_json(data) if (args.json or batch) else show.out.print(show.escape(retrieval.context))
            continue
        stream = not (args.json or args.no_stream or batch)
        on_text = _print_piece if stream else None
        try:
            answer = await kb.aquery(question, args.mode, args.top_k, session=args.session, on_text=on_text,
                                     clues=not args.no_clues, subgraph=not args.no_subgraph)
        except ScholarGraphError as exc:
            if not batch:
                raise
            failures += 1
            show.print_json({"question": question, "error": str(exc)})
            continue
        if args.json or batch:
            show.print_json(answer.to_json())
        else:
            show.print_answer(answer, streamed=stream)
    return 1 if failures else 0


def cmd_retrieve(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    questions = _questions(args)
    with command_workspace(args, overrides) as kb:
        require_indexed(kb)
        return kb.run(_retrieve_all(kb, args, questions))


async def _retrieve_all(kb: KnowledgeBase, args: argparse.Namespace, questions: list[str]) -> int:
    failures = 0
    for question in questions:
        try:
            retrieval = await kb.aretrieve(question, args.mode, args.top_k, clues=not args.no_clues,
                                           subgraph=not args.no_subgraph)
        except ScholarGraphError as exc:
            if not args.queries:
                raise
            failures += 1
            show.print_json({"query": question, "error": str(exc)})
            continue
        if args.json or args.queries:
            show.print_json(retrieval.to_json())
        else:
            show.print_retrieval(retrieval, args.top_k or kb.settings.query.top_k)
    return 1 if failures else 0
