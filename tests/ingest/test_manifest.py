import pytest

from scholargraph.errors import LoadError
from scholargraph.ingest.manifest import read_manifest
from scholargraph.ingest.registry import LoadOptions, load_file


def test_csv_manifest_sets_citation_metadata_and_id(tmp_path):
    (tmp_path / "notes.txt").write_text("Graph retrieval improves multi-hop QA.")
    (tmp_path / "m.csv").write_text("file,doi,authors,year,journal\nnotes.txt,10.1/abc,Ada Lovelace; Alan Turing,2021,ACL\n")
    manifest = read_manifest(tmp_path / "m.csv")
    doc = load_file(tmp_path / "notes.txt", LoadOptions(manifest=manifest))[0]
    assert (doc.id, doc.doi, doc.year, doc.venue) == ("10.1/abc", "10.1/abc", 2021, "ACL")
    assert doc.authors == ["Ada Lovelace", "Alan Turing"]


def test_bibtex_manifest_matches_file_field_or_key(tmp_path):
    (tmp_path / "refs.bib").write_text(
        "@inproceedings{smith2020graph,\n  title = {Graph {RAG} for Papers},\n  author = {Smith, Jane and Doe, John},\n"
        "  year = 2020,\n  booktitle = {EMNLP},\n  file = {papers/graph.pdf:application/pdf}\n}\n"
        "@article{lee2019,\n  title = \"Other\",\n  doi = {10.5/x}\n}\n")
    manifest = read_manifest(tmp_path / "refs.bib")
    assert manifest["graph.pdf"]["title"] == "Graph RAG for Papers" and manifest["graph.pdf"]["venue"] == "EMNLP"
    assert manifest["lee2019"]["doi"] == "10.5/x"


def test_manifest_without_file_column(tmp_path):
    (tmp_path / "m.csv").write_text("doi,year\n10.1/a,2020\n")
    with pytest.raises(LoadError, match="'file' column"):
        read_manifest(tmp_path / "m.csv")
