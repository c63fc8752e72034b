"""The whole loop in a real browser (Debian's chromium, headless, driven by Playwright): upload a dev
paper, watch it reach PROCESSED, ask, click a citation and see the passage (and its PDF page),
open the graph and expand a node, see an edge's evidence, the stats. Screenshots go to
test-artifacts/browser/. Outside CI a missing chromium or ../shared skips; in CI it fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from server_helpers import start_server

REPO = Path(__file__).resolve().parents[2]
DEV_PAPER = REPO.parent / "shared" / "data" / "dev" / "pdfs" / "N18-3011.pdf"
ARTIFACTS = REPO / "test-artifacts" / "browser"
KEY = "browser-test-key-0123456789"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]

pytestmark = [pytest.mark.browser, pytest.mark.shared]


def require(condition: bool, reason: str) -> None:
    if not condition:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (required in CI)")
        pytest.skip(reason)


def chromium() -> str | None:
    return shutil.which("chromium") or (str(Path("/usr/bin/chromium")) if Path("/usr/bin/chromium").exists() else None)


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    require(executable is not None, "chromium is not installed (make test installs it: apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(scripted_llm, tmp_path_factory):
    require(DEV_PAPER.exists(), f"{DEV_PAPER} not present")
    server = start_server(tmp_path_factory.mktemp("browser") / "ws", scripted_llm.base_url, server={"api_keys": KEY})
    yield server
    server.stop()


@pytest.fixture
def page(browser, site):
    context = browser.new_context(http_credentials={"username": "reader", "password": KEY},
                                  viewport={"width": 1400, "height": 860})
    context.set_default_timeout(60_000)
    yield context.new_page()
    context.close()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_upload_ask_cite_graph(page, site):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Library: upload a real PDF and watch it reach PROCESSED
    page.goto(site.url + "/#/library")
    page.get_by_test_id("role").wait_for()
    assert page.get_by_test_id("role").inner_text() == "admin"
    page.get_by_test_id("file-input").set_input_files(str(DEV_PAPER))
    status = page.locator("tr[data-doc-id] [data-testid=status]")
    status.filter(has_text="PROCESSED").wait_for(timeout=180_000)
    assert page.locator("tr[data-doc-id]").count() == 1
    assert "N18-3011.pdf" in page.locator("tr[data-doc-id]").inner_text()
    shot(page, "library")

    # Ask: streamed answer with citations; a citation opens the passage with paper, section, page
    page.get_by_role("link", name="Ask").click()
    page.get_by_test_id("question").fill("What does the paper propose for extracting knowledge from scientific text?")
    page.get_by_test_id("ask").click()
    page.locator("[data-testid=answer][data-done=true]").wait_for()
    citation = page.locator("[data-testid=answer] button.cite").first
    citation.click()
    title = page.get_by_test_id("passage-title")
    title.wait_for()
    assert "[" in title.inner_text() and len(title.inner_text()) > 6
    page.get_by_test_id("passage-page").wait_for()
    assert page.get_by_test_id("passage-page").inner_text().startswith(("p. ", "pp. "))
    assert len(page.get_by_test_id("passage-text").inner_text()) > 40
    page.get_by_test_id("open-pdf").wait_for()
    shot(page, "ask")
    with page.expect_popup() as popup:
        page.get_by_test_id("open-pdf").click()
    assert popup.value.url.startswith("blob:") and "#page=" in popup.value.url
    popup.value.close()
    assert page.get_by_test_id("history").locator("li").count() == 1

    # Graph: search, open an entity, expand a neighbour, open an edge's evidence
    page.get_by_role("link", name="Graph").click()
    first = page.locator("[data-testid=entity-results] button[data-entity-id]").first
    first.wait_for()
    first.click()
    page.get_by_test_id("node-name").wait_for()
    count = page.get_by_test_id("graph-count")
    page.wait_for_function("() => window.__scholargraph && window.__scholargraph.cy.nodes().length > 1")
    before = page.evaluate("() => window.__scholargraph.cy.nodes().length")
    expanded = page.evaluate("() => window.__scholargraph.cy.nodes('.expanded').length")
    page.evaluate("() => window.__scholargraph.cy.nodes().filter((n) => !n.hasClass('expanded'))"
                  ".sort((a, b) => b.data('degree') - a.data('degree'))[0].emit('tap')")
    page.wait_for_function(f"() => window.__scholargraph.cy.nodes('.expanded').length > {expanded}")
    after = page.evaluate("() => window.__scholargraph.cy.nodes().length")
    assert after >= before and f"{after} nodes" in count.inner_text()
    page.evaluate("() => window.__scholargraph.cy.edges()[0].emit('tap')")
    page.get_by_test_id("edge-title").wait_for()
    assert page.get_by_test_id("evidence").locator("li").count() >= 1
    shot(page, "graph")

    # Stats
    page.get_by_role("link", name="Stats").click()
    page.get_by_test_id("stat-papers").wait_for()
    assert page.get_by_test_id("stat-papers").inner_text().startswith("1")
    page.get_by_test_id("cost").wait_for()
    shot(page, "stats")
    assert not errors, errors


def test_read_only_key_sees_no_upload(browser, site, tmp_path):
    context = browser.new_context(http_credentials={"username": "x", "password": "wrong-key"})
    page = context.new_page()
    response = page.goto(site.url + "/")
    assert response.status == 401
    context.close()
