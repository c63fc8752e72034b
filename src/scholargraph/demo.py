"""`scholargraph demo`: a small real corpus shipped inside the package, indexed and questioned.

The corpus (``demo_corpus/``, listed with licences and sources in its ``SOURCES.md``) is four PMC
JATS full texts, one PDF and a MEDLINE file of five citations, all CC BY (or whose file states
CC BY), so the demo runs on a fresh machine after a plain ``pip install``: no shared data, no LLM,
no network. Without an LLM the answers are extractive, each sentence cited.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

# Questions whose answers the bundled corpus holds (one per paper family).
BUNDLED_QUESTIONS = [
    "What makes the lysis time of bacteriophage lambda vary between cells?",
    "How common were antibodies to Rift Valley fever virus in sheep and goats in Mozambique?",
    "Which Mycobacterium tuberculosis enzymes does MmPPOX inhibit?",
    "Why do cities need a tool to score their technologies?",
    "How does succinate remodel skeletal muscle fibers?",
]


PAPER_SUFFIXES = {".nxml", ".xml", ".pdf"}


@dataclass
class DemoCorpus:
    paths: list[Path]
    bundled: bool

    def describe(self) -> str:
        return "the bundled demo corpus" if self.bundled else ", ".join(str(p) for p in self.paths)


def bundled_corpus() -> Path:
    """The directory of the corpus shipped with the package."""
    return Path(str(resources.files("scholargraph") / "demo_corpus"))


def demo_corpus(given: str | None, override: Path | None) -> DemoCorpus:
    """``--corpus DIR``, else ``$SCHOLARGRAPH_DEMO_CORPUS``, else the bundled corpus."""
    chosen = Path(given) if given else override
    if chosen is not None:
        return DemoCorpus([chosen], bundled=False)
    papers = sorted(p for p in bundled_corpus().iterdir() if p.suffix in PAPER_SUFFIXES)  # not SOURCES.md
    return DemoCorpus(papers, bundled=True)


def questions_for(corpus: DemoCorpus, top_entities: list[str]) -> list[str]:
    """The bundled corpus has its own questions; another corpus is asked about its most connected topics."""
    if corpus.bundled:
        return list(BUNDLED_QUESTIONS)
    return [f"What is known about {name}?" for name in top_entities[:3]] or ["What are the main findings?"]


def next_steps(workdir: str, corpus: DemoCorpus, llm_configured: bool, program: str = "scholargraph"
               ) -> list[tuple[str, str]]:
    """(command, what it shows) for the reader's next minutes; ``program``: how the reader runs
    scholargraph (its path when the environment is not activated)."""
    return [(program + command.removeprefix("scholargraph"), what)
            for command, what in _next_steps(workdir, corpus, llm_configured)]


def _next_steps(workdir: str, corpus: DemoCorpus, llm_configured: bool) -> list[tuple[str, str]]:
    files = [p for path in corpus.paths for p in (sorted(path.iterdir()) if path.is_dir() else [path])]
    pdf = next((p for p in files if p.suffix.lower() == ".pdf"), None)
    steps = [
        (f'scholargraph ask "your question" -w {workdir}', "ask anything about these papers"),
        (f'scholargraph ask "your question" -w {workdir} --mode naive', "compare with plain vector search"),
        (f'scholargraph retrieve "your topic" -w {workdir} --json', "the ranked evidence, with paper, section, page"),
        (f"scholargraph status -w {workdir}", "one line per indexed paper"),
        (f"scholargraph entities --search virus -w {workdir}", "the knowledge graph's entities"),
    ]
    if pdf is not None:
        steps.append((f'scholargraph parse "{pdf}"', "what the PDF parser read: title, year, sections, pages"))
    steps.append(("scholargraph index ~/papers -w my_review", "your own papers: PDF, JATS, MEDLINE, CSV, JSON, text"))
    if not llm_configured:
        steps.append((f'scholargraph ask "..." -w {workdir} --llm-url http://localhost:11434/v1 --llm-model qwen2.5:7b',
                       "written answers with citations from a local model (Ollama)"))
    return steps
