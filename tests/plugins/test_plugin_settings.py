"""Plug-ins own their settings: a profile's model reads ``[plugins.<name>]`` (file, environment,
overrides) and is validated when the plug-in is looked up; the core sections still refuse typos;
the older spellings of the built-in plug-ins' settings keep working."""

from __future__ import annotations

import json

import pytest

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.config import load_settings
from scholargraph.errors import ConfigError
from scholargraph.plugins import registry
from scholargraph.plugins.base import plugin_settings
from scholargraph.profiles.fastbio.settings import BioModeSettings, FastBioSettings
from scholargraph.profiles.localkg.settings import LocalKGSettings
from scholargraph.query.ppr_settings import PPRSettings

TEXTS = ["Zebrafish regenerate fins in Summer.", "Axolotls regrow limbs in Mexico."]


@pytest.fixture
def example_plugin(monkeypatch):
    """The example plug-in registered by its one registry line."""
    monkeypatch.setattr(registry, "BUILTIN_PLUGINS", (*registry.BUILTIN_PLUGINS, "support.example_plugin"))
    registry.plugins.cache_clear()
    yield
    registry.plugins.cache_clear()


def _entities(kb: KnowledgeBase) -> list[str]:
    return sorted(e.name for e in kb.entities(limit=50))


def test_a_plugin_reads_its_own_settings_section(example_plugin, tmp_path, monkeypatch):
    (tmp_path / "scholargraph.toml").write_text("[plugins.longwords]\nmin_length = 7\n", encoding="utf-8")
    with KnowledgeBase(tmp_path, extraction={"profile": "longwords"}) as kb:
        kb.insert(texts=TEXTS)
        assert _entities(kb) == ["Axolotls", "Zebrafish"]
    monkeypatch.setenv("SCHOLARGRAPH_PLUGINS__LONGWORDS__MIN_LENGTH", "6")  # the environment wins over the file
    with KnowledgeBase(tmp_path / "w2", extraction={"profile": "longwords"}) as kb:
        kb.insert(texts=TEXTS)
        assert _entities(kb) == ["Axolotls", "Mexico", "Summer", "Zebrafish"]


def test_a_typo_in_a_plugin_section_is_refused_when_the_plugin_is_looked_up(example_plugin, tmp_path):
    (tmp_path / "scholargraph.toml").write_text("[plugins.longwords]\nmin_lenght = 7\n", encoding="utf-8")
    settings = load_settings(tmp_path)  # the core settings cannot know the plug-in's keys
    with pytest.raises(ConfigError, match=r"plugins\.longwords\.min_lenght: unknown setting"):
        registry.check_settings(settings)
    with pytest.raises(ConfigError, match=r"plugins\.longwords\.min_lenght"):
        KnowledgeBase(tmp_path)
    with pytest.raises(ConfigError, match=r"plugins\.nope: no installed plug-in"):
        KnowledgeBase(tmp_path / "w2", plugins={"nope": {"x": 1}})


def test_core_sections_still_refuse_typos(tmp_path):
    (tmp_path / "scholargraph.toml").write_text("[query]\ntop_kk = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"query\.top_kk: unknown setting"):
        load_settings(tmp_path)


def test_the_older_spellings_of_plugin_settings_still_load(tmp_path, monkeypatch, capsys):
    (tmp_path / "scholargraph.toml").write_text(
        "[localkg]\nlink_threshold = 0.8\n[query]\nppr_damping = 0.7\ntop_k = 4\n"
        "[extraction]\nrefine_threshold = 0.5\nbio_dictionary = 'genes.tsv'\n", encoding="utf-8")
    monkeypatch.setenv("SCHOLARGRAPH_LOCALKG__UNIT_TOKENS", "900")
    monkeypatch.setenv("SCHOLARGRAPH_QUERY__BIO_THRESHOLD", "0.4")
    settings = load_settings(tmp_path)
    assert settings.query.top_k == 4
    lkg = plugin_settings(settings, "localkg", LocalKGSettings)
    assert (lkg.link_threshold, lkg.unit_tokens) == (0.8, 900)
    assert plugin_settings(settings, "ppr", PPRSettings).damping == 0.7
    assert plugin_settings(settings, "bio", BioModeSettings).threshold == 0.4
    fastbio = plugin_settings(settings, "fastbio", FastBioSettings)
    assert (fastbio.refine_threshold, fastbio.dictionary) == (0.5, "genes.tsv")
    assert main(["config", "-w", str(tmp_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["plugins"]["ppr"]["damping"] == 0.7 and shown["plugins"]["localkg"]["unit_tokens"] == 900
    assert shown["plugins"]["ppr"]["facts"] == 5  # defaults shown too
