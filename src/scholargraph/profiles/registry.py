"""Deprecated import path of the plug-in registry, kept for existing plug-ins: use
:mod:`scholargraph.plugins.registry`."""

from ..plugins.registry import *  # noqa: F403
from ..plugins.registry import __all__  # noqa: F401
