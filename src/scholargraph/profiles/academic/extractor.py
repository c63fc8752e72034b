"""academic profile (thesis 000 §3.2, §4.3, §5.2.1): one LLM call per chunk returns entities,
relations and the chunk's content keywords; optional gleaning rounds ask only for what was missed.

Two reply formats (``extraction.format``): compact JSON tuples under a JSON schema that the server
enforces (``prompts/extract_json.txt``, :mod:`scholargraph.extract.schema`; the default where the server takes a
schema: real small models follow it, and its bounds stop a looping reply), or one |-separated
record per line (``prompts/extract.txt``; for servers without structured output). The parser reads
both, and JSON in any usual shape.

A reply cut for length (``finish_reason`` "length", or ending inside a record) is never cached: the
chunk is asked again with twice the completion budget, and if that is cut too its complete records
are kept with a warning. Unusable output for a chunk is recorded (raw text + reason) and the
document goes on, marked incomplete; a call that fails after its retries fails the document (a
rerun retries it, paid calls come from the cache); an unreachable server stops the run."""

from __future__ import annotations

import asyncio

from ...config import ExtractionSettings
from ...errors import ModelOutputError
from ...extract.echo import drop_echoes
from ...extract.examples import domain_examples
from ...extract.parse import parse_extraction
from ...extract.schema import compact_extraction_schema, reply_tokens_bound
from ...llm.accounting import CutReply
from ...models import Chunk, ChunkFailure, Document, Extraction, Usage
from ...prompts import load_prompt
from ...text.names import normalise_name

REPAIR_NOTES = {
    "records": ("Your previous reply could not be read. Reply with the records only, one per line: "
                "entity|name|type|description, relation|source|target|keywords|description|strength, "
                "keywords|phrase, phrase"),
    "json": ('Your previous reply could not be read. Reply with one JSON object only: {"entities": [[name, type, '
             'description], ...], "relations": [[source, relation, target, description], ...], '
             '"keywords": [phrase, ...]}'),
}
# Completion budget of one chunk: 1.5x its tokens within these bounds (a cut reply is asked again with
# twice as much). Measured with real small models: an abstract of ~300 tokens gets 150-600 completion
# tokens (JSON tuples, pretty-printed), so 512 cut half of them and cost a second call.
BUDGET_PER_CHUNK_TOKEN = 1.5
MIN_BUDGET, MAX_BUDGET = 1024, 4096


class AcademicExtractor:
    name = "academic"
    uses_llm = True
    repairs_chunks = True  # chunks are extracted one by one: a rerun retries exactly the failed ones

    def __init__(self, llm, settings: ExtractionSettings, entity_types: list[str], relation_types: list[str] | None = None):
        self.llm = llm
        self.settings = settings
        self.entity_types = entity_types
        self.relation_types = list(relation_types or [])  # typed relations (kgrag preset, seed 001 §III.B.2)
        self.glean_prompt = load_prompt("glean", __package__)
        self._prompts = {"records": load_prompt("extract", __package__), "json": load_prompt("extract_json", __package__)}
        self._examples = {fmt: domain_examples(settings.examples, fmt) for fmt in self._prompts}

    @property
    def reply_format(self) -> str:
        """"json" (compact tuples under a schema) or "records"; ``auto`` is json while the server takes
        a JSON schema (the client stops sending one when the server rejects it)."""
        chosen = self.settings.format
        if chosen == "auto":
            takes_schema = getattr(self.llm, "response_format_mode", "none") == "json_schema"
            return "json" if takes_schema else "records"
        return chosen

    @property
    def extract_prompt(self):
        return self._prompts[self.reply_format]

    @property
    def _system(self) -> str:
        system = self.extract_prompt.system.format(types=", ".join(self.entity_types))
        if self._examples[self.reply_format]:
            system += "\n" + self._examples[self.reply_format]
        if self.relation_types:
            system += "\nThe first keyword of each relation is its type, one of: " + ", ".join(self.relation_types) + "."
        return system

    def budget(self, chunk: Chunk) -> int:
        """The completion budget (max_tokens) of one chunk's extraction: under the compact schema, the
        longest reply the schema allows (a constraining server cannot go past it, so no sound reply
        is cut and asked again); with records, 1.5x the chunk."""
        if self.reply_format == "json":
            wanted = reply_tokens_bound(chunk.tokens)
        else:
            wanted = int(chunk.tokens * BUDGET_PER_CHUNK_TOKEN)
        return max(MIN_BUDGET, min(MAX_BUDGET, wanted))

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
            found = await self._call(messages, doc_id, chunk, "extract")
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
            return await self._call(messages, doc_id, chunk, "glean", allow_empty=True)
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

    def _checked(self, found: Extraction, messages: list[dict], chunk: Chunk) -> Extraction:
        """What the model copied from the instructions dropped, relations typed."""
        found = drop_echoes(found, messages[0]["content"], f"{chunk.header}\n{chunk.text}", chunk.id)
        return self._typed(found)

    async def _call(self, messages: list[dict], doc_id: str, chunk: Chunk, purpose: str,
                    allow_empty: bool = False) -> Extraction:
        chunk_id = chunk.id

        def parse(text: str) -> Extraction:  # validated before the client caches the reply
            if says_none(text):
                return Extraction()
            found = parse_extraction(text, chunk_id, self.entity_types)
            if found.cut_off:  # ended inside a record although the server said "stop": never cached
                raise CutReply(found)
            return found

        result = await self._ask(messages, doc_id, purpose, parse, chunk)
        if result.error is None:
            return self._checked(_noted(result, chunk_id), messages, chunk)
        reason = getattr(result.error, "reason", str(result.error))
        if allow_empty:
            raise ModelOutputError(reason, result.text)
        repair = REPAIR_NOTES[self.reply_format]
        retry = messages + [{"role": "assistant", "content": result.text[:4000]}, {"role": "user", "content": repair}]
        again = await self._ask(retry, doc_id, purpose, parse, chunk)
        if again.error is None:
            return self._checked(_noted(again, chunk_id), messages, chunk)
        raise ModelOutputError(reason, result.text)

    async def _ask(self, messages: list[dict], doc_id: str, purpose: str, parse, chunk: Chunk):
        """One extraction call; a reply cut for length is asked once more with twice the budget."""
        schema = compact_extraction_schema(self.entity_types, chunk.tokens) if self.reply_format == "json" else None
        budget = self.budget(chunk)
        result = None
        for max_tokens in (budget, 2 * budget):
            result = await self.llm.chat(messages, purpose=purpose, document_id=doc_id, parse=parse, schema=schema,
                                         schema_name="extraction", params={"max_tokens": max_tokens})
            if not result.cut_off:
                break
        return result


def says_none(text: str) -> bool:
    """The model's explicit "nothing to extract" answer ("none", "None.", "<|COMPLETE|>")."""
    return text.strip().strip(" .`\"'").casefold() in {"none", "<|complete|>", "nothing", "n/a"}


def _noted(result, chunk_id: str) -> Extraction:
    found: Extraction = result.parsed
    if result.truncated:
        found.notes.append(f"chunk {chunk_id}: the model's reply of {result.truncated:,} characters was cut at "
                           f"{len(result.text):,} (llm.max_reply_chars)")
    elif result.cut_off:
        found.notes.append(f"chunk {chunk_id}: the model's reply was cut off twice (finish_reason "
                           f"{result.finish_reason or 'stop'}, {result.completion_tokens:,} completion tokens); its "
                           "complete records are kept, nothing was cached")
    return found
