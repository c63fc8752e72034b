"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with their
assets from installed packages (the ``fastapi-offline`` wheel ships both bundles): no CDN, so the
pages work offline and under the server's own content policy (scripts only from this origin: the
page's start-up script is a file here too, never inline)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response

router = APIRouter(include_in_schema=False)
PREFIX = "/docs-assets"
ASSETS = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
          "redoc.standalone.js": "text/javascript", "favicon.png": "image/png"}
SWAGGER_START = """window.ui = SwaggerUIBundle({
  url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, showExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  layout: "BaseLayout"
});
"""


def assets_dir() -> Path | None:
    """The installed Swagger UI / ReDoc bundles, or None when the package is missing."""
    try:
        root = Path(str(resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        return None
    return root if (root / "swagger-ui-bundle.js").is_file() else None


def _page(title: str, head: str, body: str) -> HTMLResponse:
    if assets_dir() is None:
        body = ("<p>The documentation viewer is not installed (<code>pip install fastapi-offline</code>). "
                'The API description is at <a href="/openapi.json">/openapi.json</a>.</p>')
    return HTMLResponse(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
                        f'<link rel="icon" href="{PREFIX}/favicon.png">{head}</head><body>{body}</body></html>\n')


@router.get("/docs")
async def swagger() -> HTMLResponse:
    return _page("scholargraph API - Swagger UI", f'<link rel="stylesheet" href="{PREFIX}/swagger-ui.css">',
                 f'<div id="swagger-ui"></div><script src="{PREFIX}/swagger-ui-bundle.js"></script>'
                 f'<script src="{PREFIX}/swagger-start.js"></script>')


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return _page("scholargraph API - ReDoc", "",
                 f'<redoc spec-url="/openapi.json"></redoc><script src="{PREFIX}/redoc.standalone.js"></script>')


@router.get(PREFIX + "/swagger-start.js")
async def swagger_start() -> Response:
    return Response(SWAGGER_START, media_type="text/javascript")


@router.get(PREFIX + "/{name}")
async def asset(name: str) -> FileResponse:
    root = assets_dir()
    if name not in ASSETS or root is None:
        raise HTTPException(404, f"no documentation asset {name!r}")
    return FileResponse(root / name, media_type=ASSETS[name], headers={"Cache-Control": "public, max-age=86400"})
