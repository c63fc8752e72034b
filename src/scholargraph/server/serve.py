"""Starting the server: ``scholargraph serve`` (foreground) or :class:`ServerThread` (background,
for notebooks, tests and benchmarks)."""

from __future__ import annotations

import logging
import socket
import threading
import time

from ..config import Settings
from ..kb import KnowledgeBase
from .app import create_app
from .security import check_bind, load_keys


def run_server(settings: Settings, log_level: str = "info") -> None:
    """Serve until interrupted. Refuses a non-loopback address when no keys are configured."""
    import uvicorn

    check_bind(settings.server.host, load_keys(settings.server))
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    uvicorn.run(app, host=settings.server.host, port=settings.server.port, log_level=log_level,
                proxy_headers=False, server_header=False, timeout_graceful_shutdown=5)


class ServerThread:
    """The app served by uvicorn in a background thread on a free loopback port.

        with ServerThread(settings) as server:
            httpx.get(server.url + "/api/documents")
    """

    def __init__(self, settings: Settings, kb: KnowledgeBase | None = None, log_level: str = "warning"):
        import uvicorn

        check_bind(settings.server.host, load_keys(settings.server))
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((settings.server.host, settings.server.port))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://{settings.server.host}:{self.port}"
        config = uvicorn.Config(create_app(settings, kb), log_level=log_level, server_header=False,
                                timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                        name="scholargraph-server", daemon=True)

    def start(self, timeout: float = 60.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scholargraph server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(30)
        self._socket.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
