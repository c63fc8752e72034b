"""The two sides of a win-rate comparison: a configuration of this workspace (a query mode,
optionally an ablation, answered by the knowledge base) or answers imported from a JSONL file
(another system's: LightRAG, GraphRAG, ...), one ``{"question": ..., "answer": ...}`` per line.

Side specs (``eval winrate --a/--b``): ``hybrid``, ``hybrid:no-clues,no-subgraph``,
``lightrag_answers.jsonl`` (named after the file) or ``LightRAG=lightrag_answers.jsonl``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError

QUESTION_KEYS = ("question", "query", "q")
ANSWER_KEYS = ("answer", "response", "result", "output")
FLAGS = {"no-clues", "no-subgraph"}


@dataclass
class Side:
    name: str
    mode: str | None = None  # answered by this workspace in this mode ...
    options: dict[str, bool] = field(default_factory=dict)
    answers: dict[str, str] | None = None  # ... or imported: question -> answer
    source: str = ""

    @property
    def imported(self) -> bool:
        return self.answers is not None

    def describe(self) -> dict:
        if self.imported:
            return {"name": self.name, "imported_from": self.source, "answers": len(self.answers or {})}
        return {"name": self.name, "mode": self.mode, **({"options": self.options} if self.options else {})}


def _is_file_spec(spec: str) -> bool:
    path = spec.partition("=")[2] if "=" in spec else spec
    return path.lower().endswith((".jsonl", ".json", ".ndjson")) or Path(path).is_file()


def parse_side(spec: str) -> Side:
    """A side from its spec (see the module docstring)."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty configuration for eval winrate (give a mode such as hybrid, or a JSONL answers file)")
    if _is_file_spec(spec):
        name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        answers = read_answers(Path(path))
        return Side(name or Path(path).stem, answers=answers, source=path)
    mode, _, flags = spec.partition(":")
    options: dict[str, bool] = {}
    for flag in filter(None, (f.strip() for f in flags.split(","))):
        if flag not in FLAGS:
            raise ConfigError(f"unknown configuration flag {flag!r} in {spec!r} (use no-clues, no-subgraph)")
        options[flag[3:]] = False
    return Side(spec, mode=mode, options=options)


def _pick(row: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def read_answers(path: Path) -> dict[str, str]:
    """question -> answer from a JSONL file (a JSON list of the same objects is accepted too)."""
    if not path.is_file():
        raise ConfigError(f"answers file not found: {path}")
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    try:
        rows = json.loads(stripped) if stripped.startswith("[") else [
            json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON Lines ({exc.msg} at line {exc.lineno})") from None
    answers: dict[str, str] = {}
    for n, row in enumerate(rows, 1):
        question = _pick(row, QUESTION_KEYS) if isinstance(row, dict) else None
        answer = _pick(row, ANSWER_KEYS) if isinstance(row, dict) else None
        if question is None or answer is None:
            raise ConfigError(f"{path}: entry {n} needs a 'question' and an 'answer' (strings)")
        if question in answers and answers[question] != answer:
            raise ConfigError(f"{path}: two different answers to the question {question!r}")
        answers[question] = answer
    if not answers:
        raise ConfigError(f"{path}: no answers in the file")
    return answers
