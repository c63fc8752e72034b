"""LLM summary of a merged description that grew past its token budget (purpose ``summarise``)."""

from __future__ import annotations

from ..prompts import load_prompt
from .refresh import Summariser


def make_summariser(llm) -> Summariser:
    prompt = load_prompt("summarise")

    async def summarise(kind: str, name: str, descriptions: list[str]) -> str:
        listing = "\n".join(f"- {d}" for d in descriptions)
        result = await llm.chat(prompt.messages(kind=kind, name=name, descriptions=listing), purpose="summarise")
        text = result.text.strip()
        return text or "\n".join(descriptions)

    return summarise
