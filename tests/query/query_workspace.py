"""A small hand-built workspace whose graph is known, with a deterministic bag-of-words embedder.

Graph (entity names; relation descriptions in quotes)::

    aspirin --"aspirin inhibits cyclooxygenase"-- cyclooxygenase --"cyclooxygenase drives inflammation"-- inflammation
    aspirin --"headache migraine tension stress pain"-- headache            (irrelevant neighbour)
    aspirin --"gardening soil compost mulch seeds"-- gardening --"..."-- kinase (irrelevant path)
    inflammation --"inflammation causes swelling"-- swelling
    cyclooxygenase --"cyclooxygenase makes prostaglandin synthesis"-- prostaglandin
    warbler --"warbler eats vole"-- vole                                     (separate component)

The embedder maps each content word to a fixed random unit vector and a text to the normalised
sum of its words, so cosine similarity is word overlap: "aspirin" matches the aspirin entity,
"enzyme inhibition" matches the aspirin--cyclooxygenase relation (its keywords), and so on.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path

import numpy as np

from scholargraph.graph.refresh import GraphRefresher
from scholargraph.llm.embeddings import Embedder
from scholargraph.models import Chunk, DocStatus, Document, EntityRecord, KeywordRecord, RelationRecord, Section
from scholargraph.store import Store, open_store
from scholargraph.text.names import normalise_name
from scholargraph.text.stopwords import STOPWORDS

DIM = 1024
_WORD = re.compile(r"[a-z0-9]+")


def _word_vector(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha1(word.encode()).digest()[:4], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class BagOfWordsEmbedder(Embedder):
    name = "test:bag-of-words"
    dim = DIM

    def __init__(self) -> None:
        super().__init__(None)
        self.calls: list[list[str]] = []

    async def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in _WORD.findall(text.lower()):
                if w not in STOPWORDS:
                    out[i] += _word_vector(w)
        return out


class WordTokenizer:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


DOCS = {
    "doc1": ("Aspirin pharmacology", ["Smith", "Jones"], 2020, [
        ("c1", "Aspirin inhibits cyclooxygenase. Aspirin relieves headache.", 2),
        ("c2", "Cyclooxygenase drives inflammation and makes prostaglandin.", 3),
        ("c3", "Inflammation causes swelling of tissue.", 4),
    ]),
    "doc2": ("Gardening and kinases", ["Green"], 2021, [
        ("c4", "Gardening needs soil and compost. A kinase was found in the garden.", 1),
        ("c5", "The warbler eats the vole near the river.", 1),
    ]),
}
CHUNK_DOC = {cid: doc for doc, (_, _, _, chunks) in DOCS.items() for cid, _, _ in chunks}

ENTITIES = {  # id: (name, type, description, chunk ids)
    "A": ("aspirin", "Drug", "aspirin drug", ["c1"]),
    "B": ("cyclooxygenase", "Enzyme", "cyclooxygenase enzyme", ["c1", "c2"]),
    "C": ("inflammation", "Process", "inflammation response", ["c2", "c3"]),
    "D": ("headache", "Symptom", "headache migraine tension stress pain", ["c1"]),
    "E": ("swelling", "Symptom", "swelling edema", ["c3"]),
    "P": ("prostaglandin", "Lipid", "prostaglandin synthesis lipid", ["c2"]),
    "G": ("gardening", "Activity", "gardening soil compost mulch", ["c4"]),
    "K": ("kinase", "Enzyme", "kinase protein", ["c4"]),
    "W": ("warbler", "Animal", "warbler bird", ["c5"]),
    "V": ("vole", "Animal", "vole rodent", ["c5"]),
}
RELATIONS = {  # id: (source, target, description, keywords, chunk ids, strength)
    "r_ab": ("A", "B", "aspirin inhibits cyclooxygenase", ["enzyme inhibition"], ["c1"], 1.0),
    "r_bc": ("B", "C", "cyclooxygenase drives inflammation", ["enzyme pathway"], ["c2"], 1.0),
    "r_ad": ("A", "D", "headache migraine tension stress pain", [], ["c1"], 1.0),
    "r_ce": ("C", "E", "inflammation causes swelling", [], ["c3"], 1.0),
    "r_bp": ("B", "P", "cyclooxygenase makes prostaglandin synthesis", [], ["c2"], 1.0),
    "r_ag": ("A", "G", "gardening soil compost mulch seeds", [], ["c4"], 1.0),
    "r_gk": ("G", "K", "gardening soil compost mulch seeds", [], ["c4"], 1.0),
    "r_wv": ("W", "V", "warbler eats vole", [], ["c5"], 1.0),
}
KEYWORDS = {"k1": ("prostaglandin synthesis aspirin", "c2"), "k2": ("gardening", "c4"), "k3": ("bird song", "c5")}

QUERY_DEFAULTS = {"edge_threshold": 0.4, "clue_threshold": 0.3, "node_threshold": 0.4, "top_k": 5}


def build_store(workdir: Path) -> Store:
    embedder = BagOfWordsEmbedder()
    store = open_store(workdir)
    store.set_meta("embedding_model", embedder.name)
    store.set_meta("embedding_dim", str(DIM))
    for doc_id, (title, authors, year, chunks) in DOCS.items():
        text = " ".join(t for _, t, _ in chunks)
        doc = Document(id=doc_id, title=title, sections=[Section("Results", text)], authors=authors, year=year)
        store.add_pending(doc, "full", "test")
        rows = [Chunk(cid, doc_id, i, t, len(t.split()), section="Results", page_start=p, page_end=p)
                for i, (cid, t, p) in enumerate(chunks)]
        store.insert_chunks(rows)
        store.put_vectors("chunk", [c.id for c in rows], asyncio.run(embedder.embed([c.text for c in rows])))
        store.set_status(doc_id, DocStatus.PROCESSED)
    def graph() -> None:
        store.write_entities([EntityRecord(name, type_, desc, cid, id=eid, key=normalise_name(name), document_id=CHUNK_DOC[cid])
                              for eid, (name, type_, desc, cids) in ENTITIES.items() for cid in cids])
        store.write_relations([RelationRecord(s, t, desc, cid, kw, w, id=rid, source_id=s, target_id=t,
                                              document_id=CHUNK_DOC[cid])
                               for rid, (s, t, desc, kw, cids, w) in RELATIONS.items() for cid in cids])
        store.write_keywords([KeywordRecord(text, cid, id=kid, document_id=CHUNK_DOC[cid])
                              for kid, (text, cid) in KEYWORDS.items()])

    store.write(graph)
    store.put_vectors("keyword", list(KEYWORDS), asyncio.run(embedder.embed([t for t, _ in KEYWORDS.values()])))
    asyncio.run(GraphRefresher(store, embedder, WordTokenizer().count, 600).refresh())
    return store


def names(store, ids) -> set[str]:
    ents = store.get_entities(list(ids))
    return {ents[i].name for i in ids if i in ents}
