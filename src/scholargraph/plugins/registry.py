"""The profile and query-mode registry, and the check of the settings that name plug-ins.

Built-in plug-ins are the modules named in :data:`BUILTIN_PLUGINS`, one line each; third-party
packages add theirs through the ``scholargraph.profiles`` entry-point group (the entry point names
a module with a ``PROFILE``, or the :class:`~.base.Profile` itself). Plug-ins are imported on first
use, so ``import scholargraph`` stays light.
"""

from __future__ import annotations

import importlib
import logging
from functools import lru_cache
from importlib.metadata import entry_points
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..errors import ConfigError
from .base import Profile, QueryMode, plugin_settings

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["AUTO", "BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "check_settings", "get_mode", "get_profile", "mode_names",
           "plugins", "profile_names", "resolve_profile_name", "settings_models", "settings_of_plugins"]

log = logging.getLogger(__name__)

BUILTIN_PLUGINS = (
    "scholargraph.profiles.core",  # profile `none` + the modes naive, local, subgraph, global, hybrid, ppr, summary
    "scholargraph.profiles.offline",
    "scholargraph.profiles.academic",
    "scholargraph.profiles.fastbio",
    "scholargraph.profiles.localkg",
)
ENTRY_POINT_GROUP = "scholargraph.profiles"

AUTO = "auto"  # the profile chosen from the settings: AUTO_WITH_LLM when an LLM is configured, else AUTO_OFFLINE
AUTO_WITH_LLM = "academic"
AUTO_OFFLINE = "offline"


def _profile_of(obj: object, where: str) -> Profile:
    found = getattr(obj, "PROFILE", obj) if isinstance(obj, ModuleType) else obj
    if not isinstance(found, Profile):
        raise ConfigError(f"plug-in {where} does not provide a scholargraph Profile (got {type(found).__name__})")
    return found


@lru_cache(maxsize=1)
def plugins() -> tuple[Profile, ...]:
    """Every registered profile: the built-in ones, then the entry points' (a broken third-party
    plug-in is logged and left out; a name already taken is refused)."""
    found = [_profile_of(importlib.import_module(name), name) for name in BUILTIN_PLUGINS]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.append(_profile_of(ep.load(), f"{ep.name} ({ep.value})"))
        except Exception as exc:  # a third-party plug-in must not break the tool
            log.warning("scholargraph plug-in %s (%s) not loaded: %s", ep.name, ep.value, exc)
    profiles: dict[str, Profile] = {}
    modes: dict[str, str] = {}
    for p in found:
        if p.name in profiles or p.name == AUTO:
            log.warning("scholargraph plug-in profile %r ignored: the name is taken", p.name)
            continue
        clash = [m.name for m in p.modes if m.name in modes]
        if clash:
            log.warning("scholargraph plug-in profile %r ignored: query mode(s) %s already registered", p.name, clash)
            continue
        profiles[p.name] = p
        modes.update({m.name: p.name for m in p.modes})
    return tuple(profiles.values())


def profile_names() -> list[str]:
    return [p.name for p in plugins()]


def mode_names() -> list[str]:
    return [m.name for p in plugins() for m in p.modes]


def get_profile(name: str) -> Profile:
    for p in plugins():
        if p.name == name:
            return p
    raise ConfigError(f"extraction.profile: unknown profile {name!r}; available: {', '.join([AUTO, *profile_names()])}")


def get_mode(name: str) -> QueryMode:
    for p in plugins():
        for m in p.modes:
            if m.name == name:
                return m
    raise ConfigError(f"query mode {name!r} is not available; available: {', '.join(mode_names())}")


def resolve_profile_name(name: str, llm_configured: bool) -> str:
    """``auto`` -> the profile to use; a profile that needs an LLM without one is a clear error."""
    if name == AUTO:
        return AUTO_WITH_LLM if llm_configured else AUTO_OFFLINE
    profile = get_profile(name)
    if profile.needs_llm and not llm_configured:
        stages = f" for {'; '.join(profile.llm_stages)}" if profile.llm_stages else ""
        raise ConfigError(
            f"extraction.profile={name!r} needs an LLM{stages}: set llm.base_url and llm.model "
            "(e.g. --llm-url http://localhost:11434/v1 --llm-model qwen2.5:7b), or use --profile offline"
        )
    return name


def settings_models() -> dict[str, type[BaseModel]]:
    """The settings model of every registered profile and mode that has one, by section name."""
    found: dict[str, type[BaseModel]] = {}
    for p in plugins():
        for name, model in ((p.name, p.settings), *((m.name, m.settings) for m in p.modes)):
            if model is not None:
                found.setdefault(name, model)
    return found


def check_settings(settings: Settings) -> None:
    """The plug-ins ``settings`` name exist (``extraction.profile``, ``query.mode``) and each
    ``[plugins.*]`` section is valid for its plug-in; a ConfigError says which key is wrong."""
    profile = settings.extraction.profile
    if profile != AUTO and profile not in profile_names():
        raise ConfigError(f"invalid settings: extraction.profile: unknown profile {profile!r}; available: "
                          f"{', '.join([AUTO, *profile_names()])}")
    if settings.query.mode not in mode_names():
        raise ConfigError(f"invalid settings: query.mode: unknown query mode {settings.query.mode!r}; available: "
                          f"{', '.join(mode_names())}")
    models = settings_models()
    for name in settings.plugins:
        if name not in models:
            raise ConfigError(f"invalid settings: plugins.{name}: no installed plug-in has settings of that name; "
                              f"available: {', '.join(models) or 'none'}")
        plugin_settings(settings, name, models[name])


def settings_of_plugins(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every plug-in's effective settings (defaults filled in), as JSON data by section name."""
    return {name: plugin_settings(settings, name, model).model_dump(mode="json")
            for name, model in settings_models().items()}
