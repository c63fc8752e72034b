"""Deprecated import path of the plug-in contract, kept for existing plug-ins: use
:mod:`scholargraph.plugins.base`."""

from ..plugins.base import *  # noqa: F403
from ..plugins.base import __all__  # noqa: F401
