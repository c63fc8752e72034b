"""The plug-in system: :mod:`.base` is the contract (``Profile``, ``QueryMode``, the contexts, the
CLI kit), :mod:`.registry` finds the plug-ins and validates their settings when one is looked up.
The plug-ins themselves are packages of :mod:`scholargraph.profiles` (and third-party packages
registered through the ``scholargraph.profiles`` entry points); nothing here imports one by name
except the registry's list of built-in modules. See ``docs/architecture.md``."""
