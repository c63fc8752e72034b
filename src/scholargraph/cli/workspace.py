"""What the commands share: the workspace a command opens (with the progress display), the
questions of `ask`/`retrieve`, and the kit lent to the commands plug-ins add."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..config import Settings, load_settings
from ..errors import ConfigError, ScholarGraphError, WorkspaceError
from ..kb import KnowledgeBase
from ..models import DocStatus
from ..progress import RichProgress
from ..report import IndexReport
from . import output as show


def open_workspace(settings: Settings, *, create: bool = False) -> KnowledgeBase:
    """The knowledge base of ``settings`` with the progress display; only commands that add papers
    (``create``) may create a workspace: the others fail with a WorkspaceError when there is none."""
    kb = KnowledgeBase(settings=settings, create=create)
    kb.progress = RichProgress(usage=lambda: kb.llm.usage if kb.llm else {}, enabled=settings.progress)
    return kb


def command_workspace(args: argparse.Namespace, overrides: dict[str, Any], workdir: str | None = None, *,
                      create: bool = False) -> KnowledgeBase:
    """The workspace of a command (``--workdir`` unless ``workdir`` is given)."""
    return open_workspace(load_settings(workdir or args.workdir, overrides), create=create)


def read_queries(path: str) -> list[str]:
    """One question per line, or JSON lines with a 'question' field; blank lines ignored."""
    questions = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"questions file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the questions file {path}: {exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                questions.append(str(json.loads(line)["question"]))
            except (json.JSONDecodeError, KeyError) as exc:
                raise ScholarGraphError(f"{path}:{n}: expected a JSON object with a 'question' field ({exc})") from None
        else:
            questions.append(line)
    return questions


def require_indexed(kb: KnowledgeBase) -> None:
    """Questions need indexed papers: an empty workspace is an error, not an empty answer."""
    if not kb.store.document_ids(DocStatus.PROCESSED, 1):
        raise WorkspaceError(f"nothing is indexed in the workspace {kb.workdir} "
                             f"(see `scholargraph status`; add papers with `scholargraph index PATH --workdir {kb.workdir}`)")


class PluginKit:
    """The :class:`~scholargraph.plugins.base.CommandKit` the CLI lends plug-in commands."""

    def open_workspace(self, settings: Settings, *, create: bool = True) -> KnowledgeBase:
        return open_workspace(settings, create=create)

    def print_json(self, data: Any) -> None:
        show.print_json(data)

    def print_index_report(self, report: IndexReport) -> None:
        show.print_index_report(report)

    def print_text(self, text: str) -> None:
        show.out.print(text, markup=False, highlight=False)
