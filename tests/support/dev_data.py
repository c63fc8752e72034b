"""Where the shared dev data lives for tests and benchmarks: ``../shared/data/dev`` beside the
checkout, or, for a git worktree, beside the main checkout it belongs to. Never an absolute path."""

from __future__ import annotations

from pathlib import Path

RELATIVE = Path("shared") / "data" / "dev"


def _main_checkout(repo: Path) -> Path | None:
    """The main checkout of a git worktree (its ``.git`` is a file ``gitdir: <main>/.git/worktrees/<name>``)."""
    marker = repo / ".git"
    if not marker.is_file():
        return None
    text = marker.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.partition(":")[2].strip())
    if not gitdir.is_absolute():
        gitdir = (repo / gitdir).resolve()
    if gitdir.parent.name != "worktrees":
        return None
    return gitdir.parent.parent.parent  # <main>/.git/worktrees/<name> -> <main>


def dev_data_dir(repo: Path) -> Path:
    """The dev data folder for the checkout at ``repo``: the first that exists of ``repo/../shared/data/dev``
    and the main checkout's; else the first (which does not exist: callers skip or fail)."""
    candidates = [repo.parent / RELATIVE]
    main = _main_checkout(repo)
    if main is not None:
        candidates.append(main.parent / RELATIVE)
    return next((c for c in candidates if c.is_dir()), candidates[0])
