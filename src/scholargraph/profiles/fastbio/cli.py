"""`scholargraph fastbm`: a drop-in for fastbmRAG's ``main.py`` (seed 003 §2.7).

    scholargraph fastbm --job update --document input.csv --collection_name NAME --working_dir DIR
    scholargraph fastbm --job query --collection_name NAME --working_dir DIR --question "..."

The collection is the workspace ``DIR/NAME``, indexed with the fastbio profile (abstract draft +
main-text refinement) and queried in bio mode. fastbmRAG's other options are accepted:

* ``--llm_update_model_name`` / ``--llm_query_model_name``: ``llm.model`` for that job (when no
  model is configured otherwise; fastbmRAG's defaults phi4:latest / gemma3:27b-it-qat otherwise);
* ``--backend ollama|vllm``: ``llm.base_url`` http://localhost:11434/v1 or http://localhost:8000/v1
  (when no URL is configured otherwise; ``--llm_url`` sets any OpenAI-compatible server);
* ``--embed_model_name``: the embedding model served by the backend (``embeddings.provider =
  openai``; its dimension from ``--embedding_dim`` or a table of common Ollama models). Without
  it, scholargraph's local embedding model is used (no server needed);
* ``--embedding_similarity``: the paragraph-selection cutoff of the refinement stage
  (``plugins.fastbio.refine_threshold``), as in fastbmRAG;
* ``--top_match``: how many relations the query falls back to when none reaches the similarity
  threshold (``query.top_k``); above the threshold there is no cap.

An omitted option takes fastbmRAG's default (``--question`` "Which genes are associated with
endometriosis?", ``--top_match`` 20, ``--embedding_similarity`` 0.8 with ``--embed_model_name``),
except the embedding model: scholargraph's local one, which needs no server. Every configured
model (chat and embedding) is checked before the first call.

Everything else (``--llm_url``, ``--dictionary``, ``--similarity``, ``--weight_threshold``,
``--json``...) is scholargraph's. Both ``--working_dir`` and ``--working-dir`` spellings work.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...config import load_settings
from ...errors import ConfigError
from ...models import Answer, usage_to_json
from ...plugins.base import CommandKit, CommandWorkspace
from ...query.citations import number_cited_sources
from .normalise import load_dictionary
from .query import bio_answer, format_references

BACKEND_URLS = {"ollama": "http://localhost:11434/v1", "vllm": "http://localhost:8000/v1"}
FASTBM_DEFAULT_MODELS = {"update": "phi4:latest", "query": "gemma3:27b-it-qat"}
# fastbmRAG's defaults for the options it gives one (its main.py)
FASTBM_DEFAULT_QUESTION = "Which genes are associated with endometriosis?"
FASTBM_TOP_MATCH = 20
FASTBM_SERVED_SIMILARITY = 0.8  # --embedding_similarity, tuned for a served model such as mxbai-embed-large
# output dimension of embedding models commonly served by Ollama (for --embed_model_name)
EMBEDDING_DIMS = {"mxbai-embed-large": 1024, "nomic-embed-text": 768, "all-minilm": 384, "bge-m3": 1024,
                  "bge-large": 1024, "snowflake-arctic-embed": 1024, "snowflake-arctic-embed2": 1024,
                  "granite-embedding": 384, "paraphrase-multilingual": 768}


def _opt(p: argparse.ArgumentParser, name: str, **kwargs: Any) -> None:
    """``--name_with_underscores`` plus its ``--hyphen-spelling``."""
    flags = [f"--{name}"]
    if "_" in name:
        flags.append(f"--{name.replace('_', '-')}")
    p.add_argument(*flags, dest=name, **kwargs)


def add_fastbm_parser(subparsers, kit: CommandKit) -> argparse.ArgumentParser:
    """The ``fastbm`` command; ``kit`` (the CLI's) opens the workspace and prints."""
    p = subparsers.add_parser(
        "fastbm", help="fastbmRAG-compatible command line: --job update | query",
        description="Drop-in for fastbmRAG's main.py: the collection is the workspace WORKING_DIR/COLLECTION_NAME, "
                    "indexed with the fastbio profile and queried in bio mode.")
    _opt(p, "job", required=True, choices=["update", "query"], help="'update' adds papers; 'query' answers --question")
    _opt(p, "document", nargs="+", help="CSV with abstract, main_text, paper_id (+ title, journal, year, weight...)"
                                        "; PMC XML / MEDLINE files and directories also work")
    _opt(p, "question",
         help=f"the question (job query; default, as fastbmRAG: {FASTBM_DEFAULT_QUESTION!r})")
    _opt(p, "working_dir", default="./test", help="directory holding collections (default ./test, as fastbmRAG)")
    _opt(p, "collection_name", default="paper", help="collection = workspace WORKING_DIR/COLLECTION_NAME (default paper)")
    _opt(p, "llm_update_model_name", help="LLM for update (default: configured llm.model, else phi4:latest)")
    _opt(p, "llm_query_model_name", help="LLM for query (default: configured llm.model, else gemma3:27b-it-qat)")
    _opt(p, "embed_model_name", help="embedding model served by the backend (default: scholargraph's local model)")
    _opt(p, "embedding_dim", type=int, help="its vector size, for models not in the built-in table")
    _opt(p, "embedding_similarity", type=float,
         help="cosine cutoff for the main-text paragraphs a relation is refined from (plugins.fastbio.refine_threshold; "
              f"default {FASTBM_SERVED_SIMILARITY} with --embed_model_name, as fastbmRAG, else the setting, 0.6 for "
              "the local model)")
    _opt(p, "top_match", type=int, default=FASTBM_TOP_MATCH,
         help=f"relations shown when none reaches the similarity threshold (query.top_k; default {FASTBM_TOP_MATCH})")
    _opt(p, "backend", choices=sorted(BACKEND_URLS), default=None,
         help="ollama (default) or vllm: the default server URL when --llm_url is not given")
    _opt(p, "llm_url", help="any OpenAI-compatible base URL (overrides --backend)")
    _opt(p, "llm_concurrency", type=int, help="max concurrent LLM requests")
    _opt(p, "dictionary", help="CSV/TSV of HGNC symbols / MeSH headings and aliases (| or ; separated)")
    _opt(p, "similarity", type=float, help="query: min cosine between question and relation (plugins.bio.threshold)")
    _opt(p, "weight_threshold", type=float, help="query: leave out relations whose edge weight is below this")
    _opt(p, "dry_run", action="store_true", help="update: estimate LLM calls and tokens; index nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    # what cli.settings_overrides reads for every command
    p.set_defaults(workdir=None, llm_model=None, embedding_model=None, chunk_size=None, chunk_overlap=None,
                   profile=None, mode=None, handler=functools.partial(cmd_fastbm, kit=kit))
    return p


def workspace_of(args: argparse.Namespace) -> Path:
    return Path(args.working_dir).expanduser() / args.collection_name


def fastbm_overrides(args: argparse.Namespace, notes: list[str]) -> dict[str, Any]:
    """Settings overrides for the fastbmRAG options (see the module doc)."""
    workdir = workspace_of(args)
    base = load_settings(workdir)
    llm: dict[str, Any] = {"max_concurrency": args.llm_concurrency}
    if args.llm_url:
        llm["base_url"] = args.llm_url
    elif args.backend or not base.llm.base_url:
        llm["base_url"] = BACKEND_URLS[args.backend or "ollama"]
    model = args.llm_update_model_name if args.job == "update" else args.llm_query_model_name
    if model:
        llm["model"] = model
    elif not base.llm.model:
        llm["model"] = FASTBM_DEFAULT_MODELS[args.job]
        notes.append(f"no LLM model configured: using fastbmRAG's default {llm['model']!r}")
    other = args.llm_query_model_name if args.job == "update" else args.llm_update_model_name
    if other:
        notes.append(f"--llm_{'query' if args.job == 'update' else 'update'}_model_name is not used by --job {args.job}")

    embeddings: dict[str, Any] = {}
    if args.embed_model_name:
        name = args.embed_model_name
        dim = args.embedding_dim or EMBEDDING_DIMS.get(name.split(":")[0])
        if not dim:
            raise ConfigError(f"--embed_model_name {name}: give its vector size with --embedding_dim "
                              f"(known: {', '.join(sorted(EMBEDDING_DIMS))})")
        embeddings = {"provider": "openai", "model": name, "dimension": dim,
                      "base_url": llm.get("base_url") or base.llm.base_url}

    extraction: dict[str, Any] = {"profile": "fastbio"}
    if base.extraction.entity_types == "paper":
        extraction["entity_types"] = "biomedical"
    similarity = args.embedding_similarity
    if similarity is None and args.embed_model_name:
        similarity = FASTBM_SERVED_SIMILARITY
    profile: dict[str, Any] = {"refine_threshold": similarity}
    if args.dictionary and args.job == "update":
        profile["dictionary"] = str(Path(args.dictionary).expanduser())
    query: dict[str, Any] = {"mode": "bio", "top_k": args.top_match}
    return {"llm": llm, "embeddings": embeddings, "extraction": extraction, "query": query,
            "plugins": {"fastbio": profile, "bio": {"threshold": args.similarity}},
            "progress": False if args.quiet or args.json else None}


def merge_overrides(base: dict, top: Mapping[str, Any]) -> dict:
    """``top`` over ``base``, section by section; None values in ``top`` leave ``base``'s."""
    out = dict(base)
    for k, v in top.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = merge_overrides(out[k], v)
        elif v is not None:
            out[k] = v
    return out


def cmd_fastbm(args: argparse.Namespace, overrides: dict[str, Any] | None = None, *, kit: CommandKit) -> int:
    """Run ``scholargraph fastbm``; ``overrides`` are the generic CLI settings (cli.settings_overrides)."""
    notes: list[str] = []
    mine = fastbm_overrides(args, notes)
    settings = load_settings(workspace_of(args), merge_overrides(overrides or {}, mine))
    if args.job == "update":
        if not args.document:
            raise ConfigError("--job update needs --document FILE.csv (columns abstract, main_text, paper_id)")
        kb = kit.open_workspace(settings, create=True)
        try:
            report = kb.insert(args.document, dry_run=args.dry_run)
            per_paper = {d: usage_to_json(u) for d, u in kb.cost_by_document().items() if d in set(report.added)}
        finally:
            kb.close()
        report.notes[:0] = notes
        if args.json:
            kit.print_json({**report.to_json(), "workspace": str(settings.workdir), "per_paper": per_paper})
        else:
            kit.print_index_report(report)
            _print_per_paper(kit, per_paper)
        return 0 if report.ok else 1

    if args.question is None:
        args.question = FASTBM_DEFAULT_QUESTION
        notes.append(f"no --question: asking fastbmRAG's default question {FASTBM_DEFAULT_QUESTION!r}")
    if not args.question.strip():
        raise ConfigError("--job query needs a question: --question 'your question'")
    kb = kit.open_workspace(settings, create=False)  # a question never creates a workspace
    try:
        answer = kb.run(_query(kb, args))
    finally:
        kb.close()
    answer.notes[:0] = notes
    references = format_references(answer.sources, answer.cited or None)
    if args.json:
        kit.print_json({**answer.to_json(), "references": references.splitlines()})
    else:
        kit.print_text(answer.text)
        if references:
            kit.print_text("\nReferences:")
            kit.print_text(references)
        for note in answer.notes:
            kit.print_text(f"note: {note}")
    return 0


async def _query(kb: CommandWorkspace, args: argparse.Namespace) -> Answer:
    await kb.acheck_models()
    dictionary = load_dictionary(args.dictionary) if args.dictionary else None
    answer = await bio_answer(kb.store, kb.settings, kb.embedder, kb.llm, args.question,
                              weight_threshold=args.weight_threshold, threshold=args.similarity, dictionary=dictionary)
    return number_cited_sources(answer)  # cited papers numbered [1], [2]... as `ask` numbers them


def _print_per_paper(kit: CommandKit, per_paper: dict[str, dict]) -> None:
    if not per_paper:
        return
    calls = sum(u["llm_calls"] for u in per_paper.values())
    tokens = sum(u["total_tokens"] for u in per_paper.values())
    n = len(per_paper)
    kit.print_text(f"per paper: {calls / n:.1f} LLM calls, {tokens / n:,.0f} tokens on average over {n} paper(s)")


__all__ = ["add_fastbm_parser", "cmd_fastbm", "fastbm_overrides", "merge_overrides", "workspace_of"]
