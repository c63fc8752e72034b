"""academic profile (thesis 000 §3.2, §4.3, §5.2.1): one LLM call per chunk returns entities,
relations and the chunk's content keywords, one |-separated record per line (compact: completion
tokens are the slow part of a local model; the parser also reads JSON, for models that answer in
it anyway); optional gleaning rounds ask only for what was missed. Unusable output for a chunk is recorded (raw text + reason) and the document goes on;
a call that fails after its retries fails the document (a rerun retries it, paid calls come from
the cache); an unreachable server stops the run."""

from __future__ import annotations

import asyncio

from ..config import ExtractionSettings
from ..errors import ModelOutputError
from ..models import Chunk, ChunkFailure, Document, Extraction, Usage
from ..prompts import load_prompt
from ..text.names import normalise_name
from .parse import parse_extraction

REPAIR_NOTE = ("Your previous reply could not be read. Reply with the records only, one per line: "
               "entity|name|type|description, relation|source|target|keywords|description|strength, "
               "keywords|phrase, phrase")


class AcademicExtractor:
    name = "academic"
    uses_llm = True
    repairs_chunks = True  # chunks are extracted one by one: a rerun retries exactly the failed ones

    def __init__(self, llm, settings: ExtractionSettings, entity_types: list[str], relation_types: list[str] | None = None):
        self.llm = llm
        self.settings = settings
        self.entity_types = entity_types
        self.relation_types = list(relation_types or [])  # typed relations (kgrag preset, seed 001 §III.B.2)
        self.extract_prompt = load_prompt("extract")
        self.glean_prompt = load_prompt("glean")
        self._system = self.extract_prompt.system.format(types=", ".join(entity_types))
        if self.relation_types:
            self._system += ("\nThe first keyword of each relation is its type, one of: "
                             + ", ".join(self.relation_types) + ".")

    def estimate(self, chunks: list[Chunk], count) -> dict[str, Usage]:
        """Calls and tokens this profile would spend (before spending): prompts are counted exactly
        with the offline tokenizer; completions are assumed at ~40% of the passage (gleaning ~10%)."""
        system = count(self._system)
        extract, glean = Usage(), Usage()
        for c in chunks:
            user = count(self.extract_prompt.user.format(header=c.header, text=c.text))
            extract.add(Usage(1, 0, system + user, min(1500, int(c.tokens * 0.4) + 40), 1))
            for _ in range(self.settings.gleaning):
                glean.add(Usage(1, 0, system + user + 80, int(c.tokens * 0.1) + 20, 1))
        return {"extract": extract, "glean": glean} if self.settings.gleaning else {"extract": extract}

    async def extract(self, doc: Document, chunks: list[Chunk]) -> Extraction:
        results = await asyncio.gather(*(self.extract_chunk(doc.id, c) for c in chunks))
        out = Extraction()
        for r in results:
            out.extend(r)
        return out

    async def extract_chunk(self, doc_id: str, chunk: Chunk) -> Extraction:
        user = self.extract_prompt.user.format(header=chunk.header, text=chunk.text)
        messages = [{"role": "system", "content": self._system}, {"role": "user", "content": user}]
        try:
            found = await self._call(messages, doc_id, chunk.id, "extract")
        except ModelOutputError as exc:
            return Extraction(failures=[ChunkFailure(chunk.id, exc.reason, exc.raw)])
        for _ in range(self.settings.gleaning):
            more = await self._glean(doc_id, chunk, found)
            if more is None or not (more.entities or more.relations):
                break
            found.extend(more)
        return found

    async def _glean(self, doc_id: str, chunk: Chunk, found: Extraction) -> Extraction | None:
        names = "; ".join(dict.fromkeys(e.name for e in found.entities)) or "(nothing)"
        user = self.glean_prompt.user.format(header=chunk.header, text=chunk.text, found=names)
        messages = [{"role": "system", "content": self._system}, {"role": "user", "content": user}]
        try:
            return await self._call(messages, doc_id, chunk.id, "glean", allow_empty=True)
        except ModelOutputError:
            return None  # a failed gleaning round loses nothing already found

    def _typed(self, extraction: Extraction) -> Extraction:
        """Relations get the configured type their keywords name (the prompt asks for it first)."""
        if self.relation_types:
            keys = {normalise_name(t): t for t in self.relation_types}
            for r in extraction.relations:
                found = [keys[k] for k in (normalise_name(w) for w in r.keywords) if k in keys]
                r.types = list(dict.fromkeys(found[:1] + r.types)) if found else r.types
        return extraction

    async def _call(self, messages: list[dict], doc_id: str, chunk_id: str, purpose: str,
                    allow_empty: bool = False) -> Extraction:
        def parse(text: str) -> Extraction:  # validated before the client caches the reply
            if says_none(text):
                return Extraction()
            return parse_extraction(text, chunk_id, self.entity_types)

        result = await self.llm.chat(messages, purpose=purpose, document_id=doc_id, parse=parse)
        if result.error is None:
            return self._typed(_noted(result, chunk_id))
        reason = getattr(result.error, "reason", str(result.error))
        if allow_empty:
            raise ModelOutputError(reason, result.text)
        retry = messages + [{"role": "assistant", "content": result.text[:4000]}, {"role": "user", "content": REPAIR_NOTE}]
        again = await self.llm.chat(retry, purpose=purpose, document_id=doc_id, parse=parse)
        if again.error is None:
            return self._typed(_noted(again, chunk_id))
        raise ModelOutputError(reason, result.text)


def says_none(text: str) -> bool:
    """The model's explicit "nothing to extract" answer ("none", "None.", "<|COMPLETE|>")."""
    return text.strip().strip(" .`\"'").casefold() in {"none", "<|complete|>", "nothing", "n/a"}


def _noted(result, chunk_id: str) -> Extraction:
    found: Extraction = result.parsed
    if result.truncated:
        found.notes.append(f"chunk {chunk_id}: the model's reply of {result.truncated:,} characters was cut at "
                           f"{len(result.text):,} (llm.max_reply_chars)")
    return found

