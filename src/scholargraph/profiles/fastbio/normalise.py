"""Biomedical name normalisation for the fastbio profile (seed 003 §3.1: gene names to HGNC symbols,
disease names to MeSH headings).

Two layers:

* The LLM, in the stage-1 prompt, names genes by their HGNC symbol and diseases by their MeSH
  heading and gives the surface form as ``alias`` (``.extractor``).
* An optional user dictionary (CSV or TSV: symbol/heading, aliases separated by ``|`` or ``;``,
  optional type), applied deterministically *before* the LLM's choice: when the surface form or
  the LLM's name matches a dictionary entry, the entry's symbol/heading becomes the name.

Matching is case- and punctuation-insensitive (:func:`match_key`: NFKC, casefold, Greek letters
spelled out, everything but letters and digits dropped), so "IL-1β", "IL1-beta" and "il1beta"
are one key. Every raw name is kept as an alias of the normalised entity, so later mentions in
other papers resolve to it through the store's alias keys.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...extract.parse import map_entity_type
from ...models import EntityRecord, Extraction
from ...plugins.base import plugin_settings
from .settings import FastBioSettings

if TYPE_CHECKING:
    from ...config import Settings

__all__ = ["BioDictionary", "DictEntry", "load_dictionary", "match_key", "normalise_extraction", "dictionary_from_settings"]

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta", "θ": "theta",
    "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma",
    "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}
_NON_ALNUM = re.compile(r"[^0-9a-z]+")

NAME_COLUMNS = ("symbol", "heading", "name", "canonical", "preferred", "preferredname", "hgncsymbol", "approvedsymbol",
                "meshheading", "term", "standard", "normalised", "normalized")
ALIAS_COLUMNS = ("aliases", "alias", "synonyms", "synonym", "aliassymbol", "aliassymbols", "previoussymbols",
                 "prevsymbol", "entryterms", "entryterm", "variants")
TYPE_COLUMNS = ("type", "kind", "category", "entitytype", "class")
_ALIAS_SPLIT = re.compile(r"\s*[|;]\s*")


def match_key(text: str) -> str:
    """Case- and punctuation-insensitive key: "IL-1β" == "IL1 beta" == "il1beta"."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = "".join(_GREEK.get(ch, ch) for ch in text)
    return _NON_ALNUM.sub("", text)


def _col(name: str) -> str:
    return re.sub(r"[\s_\-:.]+", "", name).casefold()


def types_compatible(entry_type: str | None, entity_type: str | None) -> bool:
    """An untyped entry fits anything; "gene" fits "Gene/Protein"; "Other"/"" entity types fit anything."""
    if not entry_type or not entity_type or entity_type.casefold() in {"other", "concept"}:
        return True
    a, b = match_key(entry_type), match_key(entity_type)
    if not a or not b or a == b or a in b or b in a:
        return True
    parts_a = {match_key(p) for p in re.split(r"[/,|]", entry_type) if p.strip()}
    parts_b = {match_key(p) for p in re.split(r"[/,|]", entity_type) if p.strip()}
    return bool(parts_a & parts_b)


@dataclass(frozen=True)
class DictEntry:
    name: str  # HGNC symbol / MeSH heading
    type: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass
class BioDictionary:
    """Symbol/heading + aliases, looked up by :func:`match_key`."""

    entries: list[DictEntry] = field(default_factory=list)
    source: str = ""
    _by_key: dict[str, list[DictEntry]] = field(default_factory=dict, repr=False)
    _canonical: dict[str, list[DictEntry]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for entry in list(self.entries):
            self._index(entry)

    def _index(self, entry: DictEntry) -> None:
        own = match_key(entry.name)
        if own:
            self._canonical.setdefault(own, []).append(entry)
        for key in dict.fromkeys(match_key(t) for t in (entry.name, *entry.aliases)):
            if key:
                self._by_key.setdefault(key, []).append(entry)

    def add(self, name: str, aliases: Iterable[str] = (), type_: str | None = None) -> None:
        entry = DictEntry(name.strip(), (type_ or "").strip() or None, tuple(a.strip() for a in aliases if a.strip()))
        self.entries.append(entry)
        self._index(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, name: str, entity_type: str | None = None) -> DictEntry | None:
        """The entry ``name`` stands for, or None (unknown, or ambiguous between different names).

        A key that is some entry's own symbol/heading wins over aliases of other entries; among
        the candidates, only those whose type fits ``entity_type`` count.
        """
        key = match_key(name)
        if not key:
            return None
        for table in (self._canonical, self._by_key):
            found = [e for e in table.get(key, ()) if types_compatible(e.type, entity_type)]
            names = {e.name for e in found}
            if len(names) == 1:
                return found[0]
            if len(names) > 1:
                return None  # ambiguous: leave the name as the model gave it
        return None


def _sniff_delimiter(text: str, path: Path) -> str:
    first = next((line for line in text.splitlines() if line.strip() and not line.startswith("#")), "")
    if path.suffix.lower() in {".tsv", ".tab"} or "\t" in first:
        return "\t"
    return ","


def _header_columns(first: list[str]) -> tuple[int, list[int], int | None] | None:
    """(name column, alias columns, type column) when ``first`` is a header row, else None."""
    head = [_col(c) for c in first]
    if not head or not (head[0] in NAME_COLUMNS or any(h in ALIAS_COLUMNS for h in head)):
        return None
    name_col = next((i for i, h in enumerate(head) if h in NAME_COLUMNS), 0)
    alias_cols = [i for i, h in enumerate(head) if h in ALIAS_COLUMNS]
    type_col = next((i for i, h in enumerate(head) if h in TYPE_COLUMNS), None)
    return name_col, alias_cols, type_col


def parse_dictionary(text: str, path: Path | str = "<dictionary>") -> BioDictionary:
    path = Path(path)
    delimiter = _sniff_delimiter(text, path)
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
            if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    if not rows:
        raise ConfigError(f"{path}: the dictionary has no rows (expected: symbol/heading, aliases separated by | or ;)")
    columns = _header_columns(rows[0])
    if columns is not None:
        rows = rows[1:]
    name_col, alias_cols, type_col = columns or (0, [1], 2)  # no header: symbol, aliases[, type]
    out = BioDictionary(source=str(path))
    for row in rows:
        name = row[name_col].strip() if name_col < len(row) else ""
        if not name:
            continue
        aliases = [a for i in alias_cols if i < len(row) for a in _ALIAS_SPLIT.split(row[i]) if a.strip()]
        type_ = row[type_col].strip() if type_col is not None and type_col < len(row) else None
        out.add(name, aliases, type_)
    if not out.entries:
        raise ConfigError(f"{path}: the dictionary has no entries with a symbol/heading")
    return out


def load_dictionary(path: str | Path) -> BioDictionary:
    """A dictionary file: CSV or TSV (by suffix or a tab in the first line), with or without a header.

    With a header, the name column is one of symbol/heading/name/canonical/hgnc_symbol/mesh_heading,
    alias columns are aliases/alias/synonyms/alias_symbols/entry_terms..., and type/kind/category
    is optional. Without one: symbol, aliases, type. Aliases are separated by ``|`` or ``;``
    (never by commas: MeSH headings contain them). Lines starting with ``#`` are comments.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"name dictionary {p} does not exist (CSV/TSV: symbol or heading, aliases separated by | or ;)")
    return _load_cached(str(p.resolve()), p.stat().st_mtime_ns)


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int) -> BioDictionary:
    return parse_dictionary(Path(path).read_text(encoding="utf-8-sig"), path)


def dictionary_from_settings(settings: Settings) -> BioDictionary | None:
    """The dictionary named by ``plugins.fastbio.dictionary`` (None when unset)."""
    path = plugin_settings(settings, "fastbio", FastBioSettings).dictionary
    return load_dictionary(path) if path else None


# --------------------------------------------------------------------------------------------
# Applying it to one paper's extraction
# --------------------------------------------------------------------------------------------


def _dedupe(names: Iterable[str], drop: str) -> list[str]:
    """Distinct names other than ``drop``; spellings that differ only in punctuation are kept
    (the graph's own name keys tell "K-ras" from "KRAS", so each is a useful alias)."""
    seen = {" ".join(drop.split()).casefold()}
    out = []
    for n in names:
        n = " ".join((n or "").split())
        k = n.casefold()
        if match_key(n) and k not in seen:
            seen.add(k)
            out.append(n)
    return out


def normalise_extraction(extraction: Extraction, dictionary: BioDictionary | None,
                         entity_types: list[str] | None = None) -> Extraction:
    """Normalise entity names in place (and relation endpoints with them); returns ``extraction``.

    For each entity, the dictionary is tried on its surface forms (aliases from the model) and
    then on the model's name; a hit renames the entity to the entry's symbol/heading. Every raw
    name stays an alias. Relation endpoints follow their entity; an endpoint with no entity record
    that the dictionary knows becomes an entity of the entry's type. An alias claimed by two
    different entities of the paper is dropped (it would merge them). Relations that become
    self-loops are dropped.
    """
    types = list(entity_types or [])
    rename: dict[str, str] = {}
    for e in extraction.entities:
        raw = [*e.aliases, e.name]
        final = e.name
        if dictionary is not None:
            for candidate in raw:
                hit = dictionary.lookup(candidate, e.type)
                if hit is not None:
                    final = hit.name
                    break
        e.aliases = _dedupe([e.name, *e.aliases], final)
        e.name = final
        for n in raw + [final]:
            rename.setdefault(match_key(n), final)
    added: list[EntityRecord] = []
    kept = []
    for r in extraction.relations:
        ends = []
        for end in (r.source, r.target):
            key = match_key(end)
            if key in rename:
                ends.append(rename[key])
                continue
            hit = dictionary.lookup(end) if dictionary is not None else None
            if hit is None:
                ends.append(end)
                continue
            etype = map_entity_type(hit.type, types + ["Other"], "Other") if hit.type and types else ""
            added.append(EntityRecord(hit.name, etype if etype != "Other" else "", "", r.chunk_id,
                                      aliases=_dedupe([end], hit.name)))
            rename[key] = hit.name
            rename.setdefault(match_key(hit.name), hit.name)
            ends.append(hit.name)
        if match_key(ends[0]) == match_key(ends[1]):
            continue
        r.source, r.target = ends
        kept.append(r)
    extraction.relations = kept
    extraction.entities.extend(added)
    _drop_shared_aliases(extraction)
    return extraction


def _drop_shared_aliases(extraction: Extraction) -> None:
    owners: dict[str, set[str]] = {}
    for e in extraction.entities:
        for a in e.aliases:
            owners.setdefault(match_key(a), set()).add(match_key(e.name))
    shared = {k for k, names in owners.items() if len(names) > 1}
    names = {match_key(e.name) for e in extraction.entities}
    if not shared and not any(k in names for k in owners):
        return
    for e in extraction.entities:
        own = match_key(e.name)
        # an alias that is another entity's name, or that two entities claim, would merge them
        e.aliases = [a for a in e.aliases if match_key(a) not in shared and (match_key(a) == own or match_key(a) not in names)]
