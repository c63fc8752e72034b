"""HTTP API and web app over one knowledge base (``scholargraph serve``).

    from scholargraph.server import create_app
    app = create_app(load_settings("my_workspace"))     # any ASGI server; or run_server(settings)
"""

from __future__ import annotations

from .app import create_app
from .serve import run_server

__all__ = ["create_app", "run_server"]
