"""Human-readable CLI output (the --json forms are built from the same objects)."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from .models import Answer, Source, usage_to_json
from .query.sources import format_reference

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def print_index_report(report) -> None:
    data = report.to_json()
    for note in data["notes"]:
        err.print(f"[yellow]note:[/yellow] {note}")
    for warning in data["warnings"][:20]:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    if len(data["warnings"]) > 20:
        err.print(f"[yellow]… {len(data['warnings']) - 20} more warnings (use --json to see all)[/yellow]")
    for failure in data["failed"]:
        err.print(f"[red]FAILED[/red] {failure.get('path') or failure['id']}: {failure['error']}")
    usage = data["usage"]
    out.print(
        f"indexed {len(data['processed'])} document(s) ({data['chunks']} chunks) with profile '{data['profile']}'"
        f"; skipped {len(data['skipped'])} already indexed; failed {len(data['failed'])}"
        + (f"; resumed {len(data['resumed'])} interrupted" if data["resumed"] else "")
        + f" in {data['seconds']:.1f}s"
    )
    if usage["llm_calls"] or usage["cached_calls"]:
        out.print(f"LLM: {usage['llm_calls']} calls (+{usage['cached_calls']} cached), "
                  f"{usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion tokens")
    if data["stopped"]:
        err.print(f"[red]stopped:[/red] {data['stopped']}")


def print_status(rows: list[dict]) -> None:
    if not rows:
        out.print("the workspace is empty: `scholargraph index PATH` to add papers")
        return
    table = Table(show_lines=False)
    for col in ("id", "status", "scope", "profile", "chunks", "title / error"):
        table.add_column(col, overflow="fold")
    colour = {"PROCESSED": "green", "FAILED": "red", "PENDING": "yellow", "PROCESSING": "cyan"}
    for r in rows:
        detail = r["title"] if r["status"] != "FAILED" else f"{r['title']}: {r['error']}"
        table.add_row(r["id"], f"[{colour.get(r['status'], 'white')}]{r['status']}[/]", r["scope"], r["profile"] or "-",
                      str(r["chunks"]), detail[:200])
    out.print(table)


def print_stats(stats: dict) -> None:
    out.print(f"workspace   {stats['workspace']}")
    by_status = ", ".join(f"{k} {v}" for k, v in sorted(stats["documents_by_status"].items())) or "-"
    out.print(f"documents   {stats['documents']} ({by_status})")
    for key in ("chunks", "entities", "relations", "keywords"):
        out.print(f"{key:<11} {stats[key]}")
    out.print(f"embeddings  {stats['embedding_model']} ({stats['embedding_dim']}-d)")
    u = stats["usage"]
    out.print(f"LLM         {u['llm_calls']} calls (+{u['cached_calls']} cached), {u['prompt_tokens']:,} prompt + "
              f"{u['completion_tokens']:,} completion tokens")
    for purpose, p in u["by_purpose"].items():
        est = " (estimated)" if p["estimated_calls"] else ""
        out.print(f"  {purpose:<10} {p['calls']} calls, {p['prompt_tokens']:,} + {p['completion_tokens']:,} tokens{est}")


def print_sources(sources: list[Source], cited: list[int] | None = None) -> None:
    shown = [s for s in sources if not cited or s.number in cited]
    if shown:
        out.print("\n[bold]References[/bold]")
    for s in shown:
        out.print(f"  [{s.number}] {format_reference(s)}")


def print_answer(answer: Answer, streamed: bool) -> None:
    if not streamed:
        out.print(answer.text)
    else:
        out.print()
    print_sources(answer.sources, answer.cited)
    for note in answer.notes:
        err.print(f"[yellow]note:[/yellow] {note}")


def print_retrieval(retrieval) -> None:
    for s in retrieval.sources:
        out.print(f"[bold][{s.number}][/bold] {s.score:.3f}  {format_reference(s)}")
        out.print("    " + " ".join(s.text.split())[:300])


def retrieval_json(retrieval) -> dict:
    return {"query": retrieval.question, "mode": retrieval.mode, "results": [s.to_json() for s in retrieval.sources],
            "timings": {k: round(v, 4) for k, v in retrieval.timings.items()}, "usage": usage_to_json(retrieval.usage),
            "notes": retrieval.notes}
