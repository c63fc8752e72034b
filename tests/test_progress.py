"""CLI progress: nothing was printed when stderr was not a terminal (a log file,
CI), and the bar sat at "1/1 docs" through the graph work with no phase shown."""

from __future__ import annotations

from scholargraph.progress import RichProgress


def test_plain_lines_and_phases_when_stderr_is_not_a_terminal(capsys):
    progress = RichProgress(enabled=True)  # pytest's captured stderr is not a terminal
    progress.start(2)
    progress.advance()
    progress.advance()
    progress.phase("resolving entities")
    progress.finish()
    progress.phase("communities and their reports")
    err = capsys.readouterr().err
    assert "1/2 docs" in err and "2/2 docs" in err
    assert "resolving entities" in err and "communities and their reports" in err


def test_quiet_progress_prints_nothing(capsys):
    progress = RichProgress(enabled=False)
    progress.start(1)
    progress.advance()
    progress.phase("communities and their reports")
    assert capsys.readouterr().err == ""


def test_index_shows_its_phases_in_a_log(tmp_path, capsys):
    from scholargraph.cli import main

    (tmp_path / "p.md").write_text("# Dense Retrieval\n\nDense retrieval encodes passages with BERT encoders.\n")
    assert main(["index", str(tmp_path / "p.md"), "-w", str(tmp_path / "ws")]) == 0
    err = capsys.readouterr().err
    assert "1/1 docs" in err and "citation network" in err
