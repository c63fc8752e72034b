"""Human-readable CLI output (the --json forms are built from the same objects)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..models import Answer, Source
from ..query.sources import format_reference

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _total(data: dict, key: str) -> int:
    """How many items an index report's list had: a long list is truncated (``truncated``)."""
    return data.get("truncated", {}).get(key, {}).get("total", len(data[key]))


def print_index_report(report) -> None:
    data = report.to_json()
    for note in data["notes"]:
        err.print(f"[yellow]note:[/yellow] {note}")
    for warning in data["warnings"][:20]:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    if _total(data, "warnings") > 20:
        err.print(f"[yellow]… {_total(data, 'warnings') - 20} more warnings (use --json to see "
                  f"{'all' if _total(data, 'warnings') == len(data['warnings']) else 'more'})[/yellow]")
    for failure in data["failed"]:
        err.print(f"[red]FAILED[/red] {escape(str(failure.get('path') or failure['id']))}: {escape(failure['error'])}",
                  soft_wrap=True)  # a path is not broken over lines
    if _total(data, "failed") > len(data["failed"]):
        err.print(f"[red]… {_total(data, 'failed') - len(data['failed'])} more failed[/red] "
                  f"({escape(data['truncated']['full_list'])})")
    outcomes: dict[str, int] = {}
    for f in data["files"]:
        outcomes[f["outcome"]] = outcomes.get(f["outcome"], 0) + 1
        if f["outcome"] == "duplicate":
            err.print(f"[yellow]duplicate[/yellow] {escape(f['path'])}: same paper as {escape(str(f['duplicate_of']))}")
        elif f["outcome"] == "skipped":
            err.print(f"[yellow]skipped[/yellow] {escape(f['path'])}: {escape(str(f.get('reason')))}", soft_wrap=True)
    usage = data["usage"]
    out.print(
        f"indexed {_total(data, 'processed')} document(s) ({data['chunks']} chunks) with profile '{data['profile']}'"
        f"; skipped {_total(data, 'skipped')} (already indexed, duplicate or not papers); failed {_total(data, 'failed')}"
        + (f"; resumed {len(data['resumed'])} interrupted" if data["resumed"] else "")
        + f" in {data['seconds']:.1f}s"
    )
    if data["files"]:
        out.print("files: " + ", ".join(f"{n} {outcome}" for outcome, n in outcomes.items()))
    if data["chunk_failures"]:
        err.print(f"[yellow]incomplete:[/yellow] {data['chunk_failures']} chunk(s) of {_total(data, 'incomplete')} paper(s) "
                  "got no usable model output; those papers are marked (see `scholargraph status`) and the same "
                  "command run again retries exactly those chunks")
    if usage["llm_calls"] or usage["cached_calls"] or usage["failed_attempts"]:
        out.print(f"LLM: {calls_line(usage)}, "
                  f"{usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion tokens")
    if data["stopped"]:
        err.print(f"[red]stopped:[/red] {escape(data['stopped'])}")


STATUS_COLOUR = {"PROCESSED": "green", "FAILED": "red", "PENDING": "yellow", "PROCESSING": "cyan",
                 "INTERRUPTED": "magenta"}


def _status_cells(r: dict) -> tuple[str, str]:
    """(coloured status, title or error) of one status row."""
    detail = f"{r['title']}: {r['error']}" if r["status"] in ("FAILED", "INTERRUPTED") else r["title"]
    status = f"[{STATUS_COLOUR.get(r['status'], 'white')}]{r['status']}[/]"
    if r.get("chunk_failures"):  # processed, but chunks without usable model output: incomplete
        status = f"[yellow]{r['status']}, {r['chunk_failures']} chunk(s) failed[/]"
        detail = f"{detail} (incomplete: `scholargraph index` again retries those chunks)"
    if r.get("scope") not in ("full", None):  # profile and scope: in --json
        status += f" ({r['scope']})"
    return status, detail


def print_status(rows: list[dict]) -> None:
    """A table on a wide terminal; two lines per paper on a narrow one (ids are never wrapped: they
    are copied into other commands)."""
    if not rows:
        out.print("the workspace is empty: `scholargraph index PATH` to add papers")
        return
    if out.width < 120:
        for r in rows:
            status, detail = _status_cells(r)
            file = Path(r.get("source_path") or "").name
            out.print(f"{escape(r['id'])}  {status}  {r['chunks']} chunks  {escape(file)}", overflow="ignore",
                      crop=False)
            out.print(escape("    " + detail[:200]))
        return
    table = Table(show_lines=False)
    table.add_column("id", no_wrap=True)
    for col in ("status", "chunks", "file", "title / error"):
        table.add_column(col, overflow="fold")
    for r in rows:
        status, detail = _status_cells(r)
        table.add_row(escape(r["id"]), status, str(r["chunks"]), escape(Path(r.get("source_path") or "").name),
                      escape(detail[:200]))
    out.print(table)


def print_stats(stats: dict) -> None:
    out.print(f"workspace   {stats['workspace']}")
    by_status = ", ".join(f"{k} {v}" for k, v in sorted(stats["documents_by_status"].items())) or "-"
    out.print(f"documents   {stats['documents']} ({by_status})")
    for key in ("chunks", "entities", "relations", "keywords", "mentions", "sentences"):
        if key in stats and (stats[key] or key not in ("mentions", "sentences")):
            out.print(f"{key:<11} {stats[key]}")
    if stats.get("chunk_failures"):
        out.print(f"[yellow]chunks without usable model output: {stats['chunk_failures']}[/yellow] (see `scholargraph status`)")
    out.print(f"embeddings  {stats['embedding_model']} ({stats['embedding_dim']}-d)")
    u = stats["usage"]
    out.print(f"LLM         {calls_line(u)}, {u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion tokens")
    for purpose, p in u["by_purpose"].items():
        est = " (estimated)" if p["estimated_calls"] else ""
        failed = f", {p['failed_attempts']} failed attempts" if p["failed_attempts"] else ""
        out.print(f"  {purpose:<10} {p['calls']} calls{failed}, {p['prompt_tokens']:,} + {p['completion_tokens']:,} tokens{est}")


def calls_line(usage: dict) -> str:
    """"12 answered calls, 3 failed attempts, 5 cache hits": what the server answered, what it did
    not, and what never reached it."""
    return (f"{usage['llm_calls']} answered calls, {usage['failed_attempts']} failed attempts, "
            f"{usage['cached_calls']} cache hits")


def print_sources(sources: list[Source], cited: list[int] | None = None) -> None:
    shown = [s for s in sources if not cited or s.number in cited]
    if shown:
        out.print("\n[bold]References[/bold]")
    for s in shown:
        out.print(escape(f"  [{s.number}] {format_reference(s)}"))
        for p in s.supporting:  # a community report's passages, each in its paper
            out.print(escape(f"       ↳ {format_reference(p)}"))


def print_answer(answer: Answer, streamed: bool) -> None:
    if not streamed:
        out.print(escape(answer.text))
    else:
        out.print()
    print_sources(answer.sources, answer.cited)
    for note in answer.notes:
        err.print(f"[yellow]note:[/yellow] {note}")


KIND_HEADINGS = {"chunk": "passages", "entity": "entities", "relation": "relations", "community": "communities"}


def print_retrieval(retrieval, top_k: int | None = None) -> None:
    """The evidence by kind (passages, entities, relations...), each list under its heading with at
    most ``top_k`` rows: scores rank the items of one list and are not comparable across lists."""
    kinds: dict[str, list[Source]] = {}
    for s in retrieval.sources:
        kinds.setdefault(s.kind, []).append(s)
    for kind, items in kinds.items():
        shown = items[:top_k] if top_k else items
        more = f", the first {len(shown)} shown (--json lists all)" if len(shown) < len(items) else ""
        out.print(f"[bold]{escape(KIND_HEADINGS.get(kind, kind))}[/bold] ({len(items)}{more}; score ranks this list)")
        for s in shown:
            out.print(f"  [bold]{escape(f'[{s.number}]')}[/bold] {s.score:.3f}  {escape(format_reference(s))}")
            out.print(escape("      " + " ".join(s.text.split())[:300]))


def print_entities(rows: list[dict]) -> None:
    if not rows:
        out.print("no entities match")
        return
    table = Table()
    for col in ("name", "type", "aliases", "degree", "docs", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(escape(r["name"]), escape(r["type"]), escape(", ".join(r["aliases"][:5])), str(r["degree"]),
                      str(len(r["documents"])), escape(" ".join(r["description"].split())[:160]))
    out.print(table)


def print_parsed(docs: list[dict]) -> None:
    for d in docs:
        out.print(f"[bold]{escape(d['title'])}[/bold]  (id {escape(d['id'])})")
        if d.get("authors"):
            out.print("authors: " + ", ".join(d["authors"]))
        meta = {k: d.get(k) for k in ("year", "venue", "doi", "pmid") if d.get(k)}
        if meta:
            out.print(" · ".join(f"{k} {v}" for k, v in meta.items()))
        for s in d["sections"]:
            pages = f"p. {s['page_start']}–{s['page_end']}" if s.get("page_start") else ""
            out.print(escape(f"  {'  ' * (s['level'] - 1)}{s['heading'] or '(untitled)'}  [{s['kind']}] {pages} {s['chars']} chars"))
        if d.get("references"):
            out.print(f"references: {d['references']}")
        for w in d.get("warnings", []):
            err.print(f"[yellow]warning:[/yellow] {w}")
        for c in d.get("chunks", []):
            out.print(f"  chunk {c['ordinal']}: {c['tokens']} tokens, {c['section']}, p. {c['page_start']}–{c['page_end']}")


def print_winrate(result: dict) -> None:
    a, b = result["a"], result["b"]
    judge = result.get("judge") or {}
    out.print(f"{escape(a)} vs {escape(b)}: {result['questions']} questions x {result['trials']} trials "
              f"(order alternating: {', '.join(result['order'])}), {result['judgements']} judgements, "
              f"{result['unusable_judgements']} unusable; judge {escape(str(judge.get('model')))}")
    for side, questions in (result.get("missing_answers") or {}).items():
        err.print(f"[yellow]note:[/yellow] {escape(side)} has no answer to {len(questions)} question(s); they were skipped")
    table = Table(title=f"{a} win rates (%) compared with {b} (as thesis 000 Table 3.1)")
    for column in ("Metrics", "Framework", "Win Rate", "trials", "wins"):
        table.add_column(column)
    for row, r in zip(result["table"], result["criteria"].values(), strict=True):
        rate = row["win_rate"]
        shown = f"{100 * rate:.1f}%{row['arrow']}" if rate is not None else "n/a"
        trials = ", ".join("n/a" if t is None else f"{100 * t:.0f}%" for t in r[f"{a}_win_rate_per_trial"])
        table.add_row(row["metric"], escape(f"vs. {b}"), shown, trials, f"{r[f'{a}_wins']} vs {r[f'{b}_wins']}")
    out.print(table)


def print_migration(report) -> None:
    table = Table(title=f"{report.source} -> {report.target}")
    for column in ("table", "source rows", "target rows", ""):
        table.add_column(column, justify="left" if column == "table" else "right")
    for name, (a, b) in report.counts.items():
        table.add_row(name, str(a), str(b), "ok" if a == b else "[red]DIFFERENT[/red]")
    for ns, (a, b) in report.vectors.items():
        n, cos = report.sampled[ns]
        check = f"{n} sampled, min cosine {cos:.6f}" if n else ""
        table.add_row(f"vectors {ns}", str(a), str(b), ("ok " if a == b else "[red]DIFFERENT[/red] ") + check)
    out.print(table)
    if report.resumed:
        out.print("finished the copy an interrupted `migrate` had committed (nothing copied twice)")
    out.print(", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items()))
    if report.ok:
        out.print(f"[green]nothing lost[/green]. Use it with --db {report.target} (add your password), or in "
                  "scholargraph.toml:\n  [store]\n  backend = \"postgres\"\n  dsn = \"postgresql://...\"")
    else:
        out.print("[red]the copy differs from the workspace (see above)[/red]")


def print_local_kg_eval(task: str, result: dict) -> None:
    """`eval kg2text` / `eval kgqa` as tables: per paper (and per section for kg2text)."""
    table = Table()
    if task == "kg2text":
        for col in ("paper", "section", "facts", "similarity", "ROUGE-1 recall", "ROUGE-1 F1"):
            table.add_column(col, overflow="fold")
        for p in result["papers"]:
            table.add_row(escape(p["title"][:50]), "(whole paper)", str(p["facts"]), f"{p['similarity']:.3f}",
                          f"{p['rouge1']['recall']:.3f}", f"{p['rouge1']['f1']:.3f}")
            for s in p["sections"]:
                table.add_row("", escape(s["section"][:40]), str(s["facts"]), f"{s['similarity']:.3f}",
                              f"{s['rouge1']['recall']:.3f}", f"{s['rouge1']['f1']:.3f}")
        out.print(table)
        out.print(f"mean similarity {result['similarity']['mean']}, mean ROUGE-1 recall {result['rouge1_recall']['mean']}")
        return
    for col in ("paper", "questions", "from facts", "KG answer (mean / min)", "text answer (mean / min)"):
        table.add_column(col, overflow="fold")
    for p in result["papers"]:
        table.add_row(escape(p["title"][:50]), str(p["questions"]), str(p["answered_from_facts"]),
                      f"{p['kg']['mean']} / {p['kg']['min']}", f"{p['text']['mean']} / {p['text']['min']}")
    out.print(table)
