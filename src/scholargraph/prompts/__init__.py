"""Prompts are data: one file per prompt, with a header naming the seed section it implements.

File format: lines starting with ``##`` are the header (not sent); ``=== system ===`` and
``=== user ===`` start the two messages; ``{name}`` placeholders are filled with str.format.

The engine's prompts live here; a profile package keeps its own in its ``prompts/`` folder and
loads them with ``load_prompt(name, __package__)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str

    def messages(self, **values: object) -> list[dict[str, str]]:
        out = []
        if self.system:
            out.append({"role": "system", "content": self.system.format(**values)})
        out.append({"role": "user", "content": self.user.format(**values)})
        return out


@lru_cache(maxsize=64)
def load_prompt(name: str, package: str | None = None) -> Prompt:
    """Prompt ``name`` of the engine, or of the plug-in ``package`` (its ``prompts/`` folder)."""
    folder = resources.files(package).joinpath("prompts") if package else resources.files(__package__)
    text = folder.joinpath(f"{name}.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("##"))
    system, _, user = body.partition("=== user ===")
    system = system.replace("=== system ===", "").strip()
    return Prompt(name, system, user.strip())
