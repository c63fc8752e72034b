"""``/docs`` and ``/redoc`` work offline: the pages load Swagger UI and ReDoc from this server (the
installed package's bundles), never from a CDN the server's own content policy blocks (the pages would be blank)."""

from __future__ import annotations

import re

import pytest
from server_helpers import client
from test_browser import CHROMIUM_ARGS, chromium, require


@pytest.fixture(scope="module")
def server(servers, tmp_path_factory):
    return servers(tmp_path_factory.mktemp("docs") / "ws")


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_load_their_assets_from_this_server(server, path):
    with client(server) as http:
        page = http.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
        assert refs and all(r.startswith("/") and not r.startswith("//") for r in refs), refs  # same origin
        assert scripts and all("src=" in attrs and not body.strip() for attrs, body in scripts)  # none inline
        assert "script-src" not in page.headers["content-security-policy"] or "'unsafe-inline'" not in \
            page.headers["content-security-policy"].split("script-src")[1].split(";")[0]
        for ref in refs:
            asset = http.get(ref)
            assert asset.status_code == 200, ref
            if ref.endswith(".js"):
                assert "javascript" in asset.headers["content-type"] and asset.content, ref
        assert http.get("/openapi.json").json()["paths"]


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    require(executable is not None, "chromium is not installed (make test installs it: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.mark.browser
@pytest.mark.parametrize(("path", "shown"), [("/docs", ".opblock-summary-path"), ("/redoc", "[data-section-id]")])
def test_docs_pages_render_the_api_in_a_browser(browser, server, path, shown):
    page = browser.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("requestfailed", lambda r: refused.append(r.url))
    page.goto(server.url + path)
    page.locator(shown).first.wait_for(timeout=60_000)
    assert "/api/ask" in page.content()
    # ReDoc's sidebar shows its maker's logo from their CDN when reachable, and hides it when not
    assert not [r for r in refused if "redoc/logo-mini.svg" not in r], refused
    page.close()
