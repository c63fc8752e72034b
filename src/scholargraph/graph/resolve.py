"""Entity resolution: which entities are the same thing (paper2lkg §4.2, with name rules).

Pure algorithm, no database: the caller gives :class:`Candidate` rows (id, name, type,
description, aliases and a unit vector of "name: description") and gets back groups of ids to
merge, the id to keep first.

Pipeline
========
1. :func:`link_pairs` finds *candidate pairs* without comparing everything with everything.
   Name blocks, over every surface of a candidate (its name, each alias, and the outside and
   inside of a parenthesis in the name: "Retrieval-Augmented Generation (RAG)"):

   * the same compact key (rule c), the same set of content words (word order, rule e), a
     shared symmetric-delete key of a long word (one typo apart, rule f);
   * a code or proper name of one or two words against every name that starts with it
     ("SF1625" / "SF1625 Calculus in One Variable", rule e);
   * acronym keys "words before#letters#words after": "LLMs" and "large language models" both
     give ``#llm#``, "SMV thrombosis" and "superior mesenteric vein thrombosis" both give
     ``#smv#thrombosis`` (rule d);

   plus the top-``k`` vector neighbours of every candidate at cosine ≥ ``threshold`` (every
   lower-cosine rule but d is covered by a name block) and, for rule d, a range: each candidate
   with an acronym-like word against every candidate of the same first letter at cosine ≥
   ``alias_threshold``, its ``acronym_range`` closest, so whether a pair is compared does not
   depend on what else the pass holds (issue 27 item 11). The top-k neighbours come from exact
   block-wise matrix products up to ``exact_limit`` vectors, above that an inverted-file index
   (2·√n k-means cells, each vector filed under its ``nprobe`` nearest cells, top-k inside each
   cell). 100k candidates take about 20 s on two busy cores
   (``python -m benchmarks.eval_resolution --scale 100000``).

   Each pair is then *linked* when the rules below say so.

2. :func:`clique_partition` groups linked candidates the paper2lkg way: a connected component
   is not enough (A~B and B~C do not make A~C), so the maximum clique of each component is
   taken (Bron–Kerbosch, :func:`networkx.find_cliques`), removed, and the rest partitioned
   again. Only groups of two or more are returned.

3. :func:`resolve` = both, with every group ordered so that its first id is the one to keep:
   a full name before an acronym or code ("Retrieval-Augmented Generation" before "RAG",
   "SF1625 Calculus in One Variable" before "SF1625"), then the candidate with the most
   aliases, then one with a description, then the smallest id.

Rules (a pair of candidates is linked when ANY surface pair passes one of rules c–f, subject
to a and b)
==========================================================================================
a. **Type compatibility.** Types are mapped to classes (Method = Model = Tool = Algorithm =
   System ...; Dataset = Material = Corpus; Gene = Protein = "Gene/Protein"; Disease =
   Phenotype; Drug = Chemical = "Drug/Compound"; Genetic Variation = Sequence Variant; ...).
   Same class, or either type empty / a catch-all ("Concept", "Knowledge Concept",
   "OtherScientificTerm", "Generic", "Other", "Topic") → compatible. Everything else — Gene vs
   Genetic Variation, Disease vs Gene, Task vs Method — never merges. Unknown type names are
   compatible only with themselves (case/punctuation-insensitive) and the catch-alls.
b. **Variants never merge.** Each surface has a *variant signature*: its numbers (digit runs,
   roman numerals "II"/"IV"/"V" as standalone tokens), single letters next to a number or
   standing alone ("IL1A", "type 2B", "BCI-O"; Greek letter names count as letters: "HNF4alpha" =
   "HNF4A"), and size/flavour words ("base", "large", "XL", "mini", "micro", "macro", "turbo",
   ...). Surfaces whose signatures differ never link by rules c/e/f: "GPT-3"/"GPT-4",
   "ResNet-50"/"ResNet-101", "IL1A"/"IL1B", "SF1625"/"SF1626", "RISC"/"RISC-V",
   "Transformer"/"Transformer-XL", "BERT-base"/"BERT-large". Rule d compares numbers only
   (the letters of an acronym are spelt out by its long form).
c. **Same key.** The same compact key — every word plural-folded
   (:func:`~scholargraph.text.names.fold_plural`), case-folded, leading article,
   possessive "'s", hyphens, spaces and punctuation dropped, Greek letter names and roman
   numerals of two or more letters written as a letter/number: "LLM" = "LLMs", "ADAM-10" =
   "ADAM10", "Parkinson's disease" = "Parkinson disease", "beta-catenin" = "b-catenin",
   "type II diabetes" = "type 2 diabetes". Linked at any cosine, except that two
   acronym-like surfaces ("PD", "PD") also need cosine ≥ ``alias_threshold``: a short acronym is
   often two different things ("Parkinson's disease" / "panic disorder").
d. **Acronyms.** One surface is acronym-like ("RAG", "LLMs", "IoT", "nDCG", "apoE", "Dll4", "MDR
   TB") and the other spells it out: every content word gives its first letter and may give up
   to three later letters of itself, each where a piece of the word starts — a capital inside
   it ("MORphological PArser"), a letter of an acronym inside it, a known morpheme
   ("deoxy|ribo|nucleic acid" = "DNA", "inter|leukin 6" = "IL-6") — or right after such a start
   ("histone de|ac|etylase" = "HDAC", "MeSH" = "Medical Subject Headings"); a lower-case letter
   of a mixed-case acronym may come from anywhere in the word ("apoE" = "apolipoprotein E"); a
   one-word long form gives piece starts only ("PKU" = "phenyl|keto|n|uria"). A short table
   holds the exceptions ("OWL" = "Web Ontology Language"). Letters from anywhere inside words
   (Schwartz–Hearst: "DOX" = "doxorubicin", "CBZ" = "carbamazepine", but also "ISA" = "Israel",
   "RDF" = "Random Forest", at cosines of 0.31 on ASKG, issue 27 item 11) need cosine ≥
   ``inside_acronym_threshold`` instead, and are not taken from a compound of capitalised words
   ("CISC" / "ChannelingSpec") nor by the capitals of a mixed-case acronym alone ("IoT-based" /
   "interfaces"). Hyphen/slash parts are words ("Retrieval-Augmented Generation"); short lower-case function words ("of", "and", "der", "von") may give a letter
   or none ("IoT" = "Internet of Things", "PDB" = "Paget's disease of bone"); a plural "s" on the
   acronym is ignored ("LLMs" = "large language models"). Words both surfaces share at the
   start or end are set aside first ("SMV thrombosis" = "superior mesenteric vein thrombosis",
   "type 2B VWD" = "type 2B von Willebrand disease"). Needs cosine ≥ ``alias_threshold``
   (letters at starts) or ``inside_acronym_threshold`` (letters inside words).
e. **Code / proper-name prefix.** The shorter surface is the whole of the first word(s) of the
   longer one and is
   * a code (letters and digits: "SF1625", "p38", "COVID-19") → linked unless the rest of the
     longer name turns it into something else ("receptor", "inhibitor", "mutation",
     "deficiency", "pathway", ...: "IL-6" ≠ "IL-6 receptor");
   * an acronym or capitalised name ("JAVELIN", "Dau", "RANSAC") and the rest is only generic
     head nouns ("system", "model", "measure", "technique", "framework", ...).
   Needs cosine ≥ ``alias_threshold``.
   Any other containment is **not** a link: modifiers in front of a head make a narrower
   thing ("congenital hypothyroidism" ⊂ "hypothyroidism", "large language model" ⊂ "language
   model", "non-Hodgkin lymphoma" ≠ "Hodgkin lymphoma"), and words added after a common name
   make a different one ("knowledge graph construction pipeline"), except when the shorter
   name's words are spread through the longer one (neither a prefix nor a suffix) and the
   vectors agree (cosine ≥ ``threshold``).
   The same content words in another order are the same name ("predictions of intelligibility"
   = "intelligibility prediction"; cosine ≥ ``alias_threshold``).
f. **Similar names, similar meaning.** Neither surface's words contain the other's, and either
   * all words equal but one, which is a single typo (one substitution, insertion, deletion or
     swap, not in its last two letters, in a word of ≥ 9 letters without digits:
     "von Willerand factor", "spiranolactone") — cosine ≥ ``alias_threshold``; or
   * cosine ≥ ``threshold`` AND character-trigram Jaccard of the compact keys ≥
     ``name_threshold`` ("hash-tag recommendation task" / "hashtag recommendation problem").
   A close vector alone never merges: "BERT"/"RoBERTa" have similar descriptions but trigram
   Jaccard 0.2.

A missing vector (``None``) counts as agreement for the ``alias_threshold`` and
``inside_acronym_threshold`` rules (keep the latter below ``threshold``) and as
disagreement for the ``threshold`` ones (f's trigram test and spread-out containment). So does
a pair of candidates with the same description text (two names from one sentence, as the
offline extractor writes them): their vectors differ only by the names, so they are no
evidence either way — without this, "tetrahydrocortisol" and "tetrahydrocortisone" from one
sentence score 0.996 and merge by rule f.

Thresholds
==========
``alias_threshold`` (0.3) is a veto, not evidence: the name already says "same", the vectors
must only not say "unrelated". With the local MiniLM model over "name: <sentence>", mentions
from unrelated passages score 0.08 ± 0.12 (95th percentile 0.30) on the dev pairs of
``benchmarks/data/alias_pairs.jsonl``, so 0.3 rejects ~95% of unrelated contexts — "PD"
(Parkinson's disease) vs "PD" (panic disorder) scores 0.26. ``threshold`` (0.9) guards the
weak name evidence of rule f's trigram test and of spread-out containment; with sentence
descriptions it rarely passes for true aliases (dev pairs: mean cosine 0.60 for aliases, 0.63
for near-misses), so those rules mostly matter with LLM-written entity descriptions (see
``benchmarks/eval_resolution.py``).
``inside_acronym_threshold`` (0.5) asks the vectors to agree when an acronym's letters come from
inside words: on the six ASKG papers every such pair between 0.3 and 0.5 was wrong ("ISA" /
"Israel" 0.31, "SSN" / "Session" 0.49), while the "DOX" / "doxorubicin" kind of BioRED (two
mentions in one abstract) mostly scores above 0.5.

Modules
=======
This module is the entry point (:class:`Candidate`, :class:`ResolutionSettings`,
:func:`link_pairs`, :func:`clique_partition`, :func:`resolve`, :func:`explain`); the parts live in

* :mod:`~scholargraph.graph.resolve_types`: type classes and compatibility (rule a);
* :mod:`~scholargraph.graph.resolve_acronyms`: acronym-like words and their spelling (rule d);
* :mod:`~scholargraph.graph.resolve_names`: surfaces, compact keys, variant signatures, trigrams,
  name similarity, acronym matching of two surfaces (rules b–d, f);
* :mod:`~scholargraph.graph.resolve_rules`: the rules for one pair, and what :func:`explain` reports;
* :mod:`~scholargraph.graph.resolve_blocks`: candidate pairs (name blocks, vector neighbours,
  the inverted-file index).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from .resolve_blocks import candidate_pairs
from .resolve_names import acronym_matches, make_surface, name_similarity, surfaces_of
from .resolve_rules import explain_pair, linked, same_context
from .resolve_types import Candidate, ResolutionSettings, type_class, types_compatible

__all__ = [
    "Candidate",
    "ResolutionSettings",
    "acronym_matches",
    "clique_partition",
    "explain",
    "link_pairs",
    "name_similarity",
    "resolve",
    "type_class",
    "types_compatible",
]


def link_pairs(cands: Sequence[Candidate], settings: ResolutionSettings | None = None) -> list[tuple[str, str]]:
    """Linked id pairs ``(a, b)``, ``a`` before ``b`` in input order, sorted by that order.

    Candidate pairs come from name blocks and vector neighbours (see the module docstring);
    each is then checked against the rules.
    """
    settings = settings or ResolutionSettings()
    if len(cands) < 2:
        return []
    surfaces = [surfaces_of(c) for c in cands]
    rows, cols, cos = candidate_pairs(cands, surfaces, settings)
    links = []
    for i, j, c in zip(rows.tolist(), cols.tolist(), cos.tolist(), strict=True):
        value = None if c != c or same_context(cands[i], cands[j]) else c
        if linked(cands[i], cands[j], surfaces[i], surfaces[j], settings, value):
            links.append((cands[i].id, cands[j].id))
    return links


def explain(a: Candidate, b: Candidate, settings: ResolutionSettings | None = None) -> dict:
    """Why two candidates link or not (rules only; candidate-pair blocking is not involved).

    Types, the cosine, whether it counts (not when both have the same description), the lowest
    cosine a rule asks for, the best name similarity, and the verdict.
    """
    return explain_pair(a, b, settings or ResolutionSettings())


# --------------------------------------------------------------------------------------------
# Clique partition
# --------------------------------------------------------------------------------------------

_MAX_CLIQUES_SCANNED = 20000


def clique_partition(nodes: Sequence[str], links: Iterable[tuple[str, str]], max_group: int = 50
                     ) -> list[list[str]]:
    """Greedy maximum-clique partition (paper2lkg §4.2): groups of size >= 2, deterministic.

    Per connected component: take a maximum clique (Bron–Kerbosch via
    :func:`networkx.find_cliques`; ties -> the clique whose members come first in ``nodes``),
    cut it to ``max_group`` members, remove it, repeat on what is left. Members keep the order of
    ``nodes``; groups are ordered by their first member. Very dense components scan at most
    20,000 maximal cliques per step (the best found is taken). Links naming unknown nodes are
    ignored.
    """
    order = {node: i for i, node in enumerate(nodes)}
    adj: dict[int, set[int]] = defaultdict(set)
    for a, b in links:
        ia, ib = order.get(a), order.get(b)
        if ia is None or ib is None or ia == ib:
            continue
        adj[ia].add(ib)
        adj[ib].add(ia)
    max_group = max(2, max_group)
    groups: list[list[int]] = []
    for comp in _components(sorted(adj), adj):
        groups += _partition_component(comp, adj, max_group)
    groups.sort(key=lambda g: g[0])
    return [[nodes[i] for i in g] for g in groups]


def _components(members: list[int], adj: dict[int, set[int]]) -> list[list[int]]:
    """Connected components (sorted lists, ordered by first member) of the graph on ``members``."""
    allowed = set(members)
    seen: set[int] = set()
    out = []
    for start in members:
        if start in seen:
            continue
        seen.add(start)
        comp, frontier = [start], [start]
        while frontier:
            v = frontier.pop()
            for u in adj[v]:
                if u in allowed and u not in seen:
                    seen.add(u)
                    comp.append(u)
                    frontier.append(u)
        out.append(sorted(comp))
    return out


def _partition_component(comp: list[int], adj: dict[int, set[int]], max_group: int) -> list[list[int]]:
    groups: list[list[int]] = []
    work = [comp]
    while work:
        c = work.pop(0)
        if len(c) < 2:
            continue
        cset = set(c)
        sub = {v: adj[v] & cset for v in c}
        n_edges = sum(len(x) for x in sub.values()) // 2
        if n_edges == 0:
            continue
        if n_edges == len(c) * (len(c) - 1) // 2:
            best = c
        else:
            import networkx as nx  # only when a block is not a clique already

            graph = nx.Graph()
            graph.add_nodes_from(c)
            graph.add_edges_from((v, u) for v in c for u in sorted(sub[v]) if u > v)
            best_key: tuple | None = None
            for scanned, clique in enumerate(nx.find_cliques(graph)):
                key = (-len(clique), sorted(clique))
                if best_key is None or key < best_key:
                    best_key = key
                if scanned >= _MAX_CLIQUES_SCANNED:
                    break
            assert best_key is not None
            best = best_key[1]
        best = best[:max_group]
        groups.append(best)
        taken = set(best)
        rest = [v for v in c if v not in taken]
        work = _components(rest, sub) + work
    return groups


# --------------------------------------------------------------------------------------------
# Resolve
# --------------------------------------------------------------------------------------------


def _keep_key(c: Candidate) -> tuple:
    s = make_surface(c.name)
    return (s.acronym, -len(c.aliases or []), 0 if (c.description or "").strip() else 1, c.id)


def resolve(cands: Sequence[Candidate], settings: ResolutionSettings | None = None) -> list[list[str]]:
    """Groups of candidate ids that are one entity; each group's first id is the one to keep.

    Keep order: a full name before an acronym/code, then more aliases, then having a
    description, then the smaller id. Groups come in the order of their earliest candidate.
    """
    settings = settings or ResolutionSettings()
    ids = [c.id for c in cands]
    if len(set(ids)) != len(ids):
        raise ValueError("candidate ids must be unique")
    by_id = {c.id: c for c in cands}
    groups = clique_partition(ids, link_pairs(cands, settings), settings.max_group)
    return [sorted(g, key=lambda i: _keep_key(by_id[i])) for g in groups]
