"""One place where the localkg stages talk to the LLM: a prompt file, its pydantic output model,
the stage's purpose (so ``stats --cost`` shows calls and tokens per stage), and the unit it reads.

An answer that cannot be used fails that unit only: after one re-ask (``localkg.repair``) the
failure is recorded (stage, unit, reason, raw answer) and the stage goes on without it. A call that
fails after the client's retries (server error) fails the document, as in every profile; an
unreachable server stops the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from ...errors import ModelOutputError
from ...llm.output import example_placeholders, output_schema, parse_reply
from ...models import ChunkFailure
from ...prompts import Prompt, load_prompt
from .outputs import plain_text
from .settings import LocalKGSettings

M = TypeVar("M", bound=BaseModel)
REPAIR_NOTE = "Your previous reply was not valid JSON in the required format. Reply with the JSON object only."

# LLM call purposes, one per stage (seed 004 §4.1-4.5)
STAGES = {
    "lkg_mentions": "stage 1 (mention extraction)",
    "lkg_linking": "stage 2 (entity linking: familiarity and descriptions)",
    "lkg_relations": "stage 3 (local relation extraction)",
    "lkg_global": "stage 4 (paper-level relation extraction)",
    "lkg_taxonomy": "stage 5 (taxonomy and predicate resolution)",
}


def prompt(name: str) -> Prompt:
    return load_prompt(name, __package__)


@dataclass
class StageContext:
    """What every stage gets: the LLM, the workspace's embedding function, the settings, and the
    lists that collect the units that failed."""

    llm: Any  # LLMClient
    embed: Callable[[Sequence[str]], Awaitable[np.ndarray]]
    settings: LocalKGSettings
    doc_id: str
    failures: list[ChunkFailure] = field(default_factory=list)

    async def ask(self, name: str, output: type[M], purpose: str, where: str, chunk_id: str,
                  **values: object) -> M | None:
        """Prompt ``name`` filled with ``values``; the answer as ``output``, or None (recorded) when
        the model's answer is unusable."""
        messages = prompt(name).messages(**values)
        examples = example_placeholders(messages[0]["content"])  # values a small model copies as data
        schema = output_schema(output)
        result = await self.llm.chat(messages, purpose=purpose, schema=schema, schema_name=output.__name__,
                                     document_id=self.doc_id)
        try:
            return parse_reply(result.text, output, placeholders=examples)
        except ModelOutputError as first:
            if self.settings.repair:
                retry = [*messages, {"role": "assistant", "content": result.text[:4000]},
                         {"role": "user", "content": REPAIR_NOTE}]
                again = await self.llm.chat(retry, purpose=purpose, schema=schema, schema_name=output.__name__,
                                            document_id=self.doc_id)
                try:
                    return parse_reply(again.text, output, placeholders=examples)
                except ModelOutputError:
                    pass
            self.fail(purpose, where, chunk_id, first.reason, result.text)
            return None

    async def ask_text(self, name: str, purpose: str, where: str, chunk_id: str, **values: object) -> str | None:
        """A free-text answer (a summary), or None (recorded) when empty."""
        result = await self.llm.chat(prompt(name).messages(**values), purpose=purpose, document_id=self.doc_id)
        try:
            return plain_text(result.text)
        except ModelOutputError as exc:
            self.fail(purpose, where, chunk_id, exc.reason, result.text)
            return None

    def fail(self, purpose: str, where: str, chunk_id: str, reason: str, raw: str) -> None:
        self.failures.append(ChunkFailure(chunk_id, f"localkg {STAGES[purpose]}, {where}: {reason}", raw))


def numbered(items: Sequence[str]) -> str:
    """``[1] a`` lines, the way prompts list what an answer refers to by number."""
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(items, 1))


def batched(items: Sequence, size: int) -> list[list]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]
