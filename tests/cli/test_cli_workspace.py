"""What a new user meets first: commands on a missing or empty workspace, `index` of a
path that does not exist, and what a read-only command costs at start."""

import json
import subprocess
import sys

import pytest

from scholargraph.cli import main

READING_COMMANDS = [
    ["ask", "What is SimCSE?"], ["ask", "What is SimCSE?", "--json"], ["retrieve", "What is SimCSE?"],
    ["status"], ["stats"], ["delete", "some-paper"], ["entities"], ["communities"], ["citations"], ["plot"],
    ["reembed"],
]


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv", READING_COMMANDS, ids=lambda a: " ".join(a))
def test_reading_a_missing_workspace_is_an_error_and_creates_nothing(capsys, tmp_path, argv):
    ws = tmp_path / "no_such_ws"
    code, out, err = run(capsys, *argv, "-w", str(ws))
    assert code == 4 and "no workspace at" in err and "scholargraph index" in err
    assert not ws.exists()


@pytest.mark.parametrize("command", ["ask", "retrieve"])
def test_a_question_to_an_empty_workspace_is_an_error(capsys, tmp_path, command):
    from scholargraph import KnowledgeBase

    ws = tmp_path / "ws"
    KnowledgeBase(ws).close()  # an empty workspace
    code, out, err = run(capsys, command, "What is SimCSE?", "-w", str(ws))
    assert code == 4 and "nothing is indexed" in err and out == ""


def test_streamed_answer_shows_when_nothing_matches(tmp_path):
    """The streamed path printed nothing where --json said 'Nothing is indexed ...'."""
    import asyncio

    from scholargraph import KnowledgeBase

    kb = KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"})
    pieces: list[str] = []
    answer = asyncio.run(kb.aquery("What is SimCSE?", on_text=pieces.append))
    kb.close()
    assert "Nothing is indexed" in answer.text and "".join(pieces) == answer.text


def test_index_of_a_missing_path_says_so_and_records_nothing(capsys, tmp_path):
    ws = tmp_path / "ws"
    code, out, err = run(capsys, "index", str(tmp_path / "no" / "such" / "path"), "-w", str(ws), "--json")
    assert code == 5 and "no such file or directory" in err and "unsupported file type" not in err
    assert not ws.exists()  # nothing recorded, not even a workspace


def test_kb_insert_of_a_missing_path_records_no_failed_row(tmp_path):
    from scholargraph import KnowledgeBase
    from scholargraph.errors import NotFoundError

    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}) as kb:
        with pytest.raises(NotFoundError, match="no such file or directory"):
            kb.insert([tmp_path / "missing.pdf"])
        assert kb.status() == []


@pytest.mark.parametrize("argv", [["status"], ["delete", "x"], ["stats"]], ids=lambda a: a[0])
def test_reading_commands_do_not_import_torch(tmp_path, argv):
    """A command that embeds nothing must not pay for torch / sentence-transformers at start, nor one
    that searches no graph for networkx / scipy."""
    ws = tmp_path / "ws"
    code = ("import json, sys\nfrom scholargraph import KnowledgeBase\nfrom scholargraph.cli import main\n"
            f"KnowledgeBase({str(ws)!r}).close()\n"
            f"main({argv!r} + ['-w', {str(ws)!r}, '--json'])\n"
            "print(json.dumps([m for m in ('torch', 'sentence_transformers', 'transformers', 'networkx', 'scipy')"
            " if m in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


HEAVY_MODULES = "[m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]"


@pytest.fixture(scope="module")
def small_workspace(tmp_path_factory):
    from scholargraph import KnowledgeBase

    papers = tmp_path_factory.mktemp("papers")
    (papers / "simcse.md").write_text("# SimCSE\n\nSimCSE trains sentence embeddings by contrastive learning. "
                                      "Dropout noise makes the positive pairs.\n")
    ws = tmp_path_factory.mktemp("ws") / "ws"
    with KnowledgeBase(ws, extraction={"profile": "offline"}) as kb:
        kb.insert([papers])
    return ws


@pytest.mark.parametrize("argv", [["ask", "What is SimCSE?"], ["retrieve", "What is SimCSE?"], ["--help"],
                                  ["ask", "--help"]], ids=" ".join)
def test_questions_and_help_do_not_import_torch(small_workspace, argv):
    """A question is embedded by the numpy runtime; torch (seconds of CPU) is never imported."""
    code = ("import json, sys\nfrom scholargraph.cli import main\n"
            f"try:\n    code = main({argv!r} + ['-w', {str(small_workspace)!r}, '--json'])\n"
            "except SystemExit as exc:\n    code = exc.code\n"
            f"print(json.dumps([code, {HEAVY_MODULES}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == [0, []]
    if argv[0] in ("ask", "retrieve") and argv[1] != "--help":
        assert "SimCSE" in "\n".join(lines[:-1])


def test_delete_by_file_name_or_title(capsys, tmp_path):
    papers = tmp_path / "papers"
    (papers / "sub").mkdir(parents=True)
    (papers / "simcse.txt").write_text("SimCSE: contrastive sentence embeddings\n\nContrastive learning trains encoders.\n")
    (papers / "graph.md").write_text("# Graph RAG\n\nKnowledge graphs help retrieval-augmented generation.\n")
    (papers / "sub" / "graph.md").write_text("# Other Graph Paper\n\nGraphs of papers and their citations.\n")
    ws = str(tmp_path / "ws")
    code, out, _ = run(capsys, "index", str(papers), "-w", ws, "--json", "--profile", "offline")
    assert code == 0 and len(json.loads(out)["processed"]) == 3

    code, out, _ = run(capsys, "delete", "simcse.txt", "-w", ws, "--json")
    assert code == 0 and len(json.loads(out)["deleted"]) == 1
    code, out, _ = run(capsys, "delete", "graph rag", "-w", ws, "--json")  # title, case ignored
    assert code == 0
    code, out, _ = run(capsys, "status", "-w", ws, "--json")
    assert [d["title"] for d in json.loads(out)["documents"]] == ["Other Graph Paper"]


def test_delete_of_an_ambiguous_name_lists_the_matches(capsys, tmp_path):
    papers = tmp_path / "papers"
    (papers / "sub").mkdir(parents=True)
    (papers / "graph.md").write_text("# Graph RAG\n\nKnowledge graphs help retrieval-augmented generation.\n")
    (papers / "sub" / "graph.md").write_text("# Other Graph Paper\n\nGraphs of papers and their citations.\n")
    ws = str(tmp_path / "ws")
    _, out, _ = run(capsys, "index", str(papers), "-w", ws, "--json", "--profile", "offline")
    ids = json.loads(out)["processed"]
    code, _, err = run(capsys, "delete", "graph.md", "-w", ws)
    assert code == 1 and "matches 2 papers" in err and all(i in err for i in ids)
    code, _, err = run(capsys, "delete", "nothing.pdf", "-w", ws)
    assert code == 5 and "no paper with that file name or title" in err


def test_status_shows_the_papers_of_an_interrupted_run(capsys, tmp_path):
    from scholargraph import KnowledgeBase
    from scholargraph.models import Document, Section

    ws = tmp_path / "ws"
    with KnowledgeBase(ws) as kb:  # a run that claimed a paper, then was killed
        kb.store.write(lambda: kb.store.add_pending(Document("d1", "A paper", [Section("", "text")]), "full", "offline"))
        assert kb.store.claim_pending(1) == ["d1"]
    code, out, _ = run(capsys, "status", "-w", str(ws), "--json")
    row = json.loads(out)["documents"][0]
    assert code == 0 and row["status"] == "INTERRUPTED" and "next `scholargraph index`" in row["error"]
    code, out, _ = run(capsys, "status", "-w", str(ws))
    assert "INTERRUPTED" in out


@pytest.fixture
def indexed(capsys, tmp_path):
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "b.txt").write_text("Contrastive learning trains sentence encoders such as SimCSE on paired sentences.\n")
    ws = str(tmp_path / "ws")
    code, _, _ = run(capsys, "index", str(papers), "-w", ws, "--json", "--profile", "offline")
    assert code == 0
    return ws


def test_llm_url_without_model_uses_the_only_served_model(capsys, indexed, llm_server):
    server = llm_server(models=["qwen-only"], strict_models=True, default_reply="SimCSE trains encoders [1].")
    code, out, err = run(capsys, "ask", "What trains sentence encoders?", "-w", indexed, "--mode", "naive", "--json",
                         "--llm-url", server.base_url)
    answer = json.loads(out)
    assert code == 0 and not answer["extractive"] and answer["answer"] == "SimCSE trains encoders [1]."
    assert {r["model"] for r in server.stats.requests} == {"qwen-only"}


def test_llm_url_without_model_on_a_server_of_several_models_lists_them(capsys, indexed, llm_server):
    server = llm_server(models=["llama3:8b", "qwen2.5:7b"])
    code, out, err = run(capsys, "ask", "What trains sentence encoders?", "-w", indexed, "--mode", "naive",
                         "--llm-url", server.base_url)
    assert code == 2 and "llama3:8b, qwen2.5:7b" in err and "--llm-model" in err and server.stats.calls == 0


def test_serve_on_a_missing_workspace_stops_with_exit_4(capsys, tmp_path, monkeypatch):
    """`serve -w /no/such/dir` refuses (exit 4, pointing at --create): no empty workspace is made and served."""
    import scholargraph.server

    served: list = []
    monkeypatch.setattr(scholargraph.server, "run_server", lambda settings, *a, **k: served.append(settings))
    ws = tmp_path / "no_such_ws"
    code, out, err = run(capsys, "serve", "-w", str(ws))
    assert code == 4 and "no workspace at" in err and "--create" in err
    assert not ws.exists() and not served
    assert run(capsys, "serve", "-w", str(ws), "--create")[0] == 0  # on purpose: an empty library to upload into
    assert served and served[0].workdir == ws.resolve()
