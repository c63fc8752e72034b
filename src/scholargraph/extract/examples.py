"""Domain examples for the extraction prompt (thesis 000 §5.2: adapting the prompts to the
literature's domain): ``extraction.examples`` = none (default: the prompt is unchanged), cs, bio
(short built-in examples, one per reply format: ``prompts/examples_<domain>_<format>.txt``), or the
path of a text file (lines starting with ``##`` are left out) appended to the system prompt as it is.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..prompts import load_prompt

BUILT_IN = ("cs", "bio")


def domain_examples(choice: str, reply_format: str) -> str:
    """The text appended to the extraction system prompt ("" for none)."""
    choice = (choice or "none").strip()
    if choice.lower() == "none":
        return ""
    if choice.lower() in BUILT_IN:
        return load_prompt(f"examples_{choice.lower()}_{reply_format}").system
    path = Path(choice).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"extraction.examples: {choice!r} is neither none, cs, bio nor a readable text file "
                          f"({exc.strerror or exc})") from exc
    return "\n".join(line for line in text.splitlines() if not line.startswith("##")).strip()
