import pytest

from scholargraph.errors import LoadError
from scholargraph.ingest.registry import LoadOptions, iter_files, load_file


def test_huge_file_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("word " * 50_000)
    with pytest.raises(LoadError, match="file too large"):
        load_file(big, LoadOptions(max_bytes=100_000))


def test_missing_and_directory_paths(tmp_path):
    with pytest.raises(LoadError, match="file not found"):
        load_file(tmp_path / "nope.txt")
    (tmp_path / "d.txt").mkdir()
    with pytest.raises(LoadError, match="not a regular file"):
        load_file(tmp_path / "d.txt")


def test_directories_expand_to_supported_files_only(tmp_path):
    (tmp_path / "a.md").write_text("# A\ntext")
    (tmp_path / ".hidden.md").write_text("# H\ntext")
    (tmp_path / "notes.docx").write_bytes(b"PK")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.nxml").write_text("<article/>")
    assert [p.name for p in iter_files([tmp_path])] == ["a.md", "b.nxml"]
