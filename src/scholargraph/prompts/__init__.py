"""Prompts are data: one file per prompt, with a header naming the seed section it implements.

File format: lines starting with ``##`` are the header (not sent); ``=== system ===`` and
``=== user ===`` start the two messages; ``{name}`` placeholders are filled with str.format.
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
def load_prompt(name: str) -> Prompt:
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("##"))
    system, _, user = body.partition("=== user ===")
    system = system.replace("=== system ===", "").strip()
    return Prompt(name, system, user.strip())
