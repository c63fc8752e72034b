"""Every view of the web app in a real browser (Debian's chromium, headless, driven by Playwright),
on data the tests bring with them, so they run on a fresh clone (no ../shared):

* upload the demo corpus's PDF, watch it reach PROCESSED, ask, click a citation and see the
  passage with the cited sentence marked (and its PDF page), the Sources list numbered once, the
  graph explorer and its edge evidence, the stats;
* on a workspace indexed from tests/support/web_corpus (three papers citing one another): the
  library's search, sort, filters and pages; a paper's page and its citation links; the whole-graph
  overview (communities, filters, labels that never overlap, sampling); the communities and their
  reports written on demand; the query settings (top-k, mode, context only, stream).

The LLM is the scripted server (its answers quote a sentence of the first source they cite).
Screenshots go to test-artifacts/browser/. Outside CI a missing chromium skips; in CI it fails."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from server_helpers import index_workspace, start_server
from support.canned import answer_reply, default_rules
from support.canned_terms import user_text
from support.web_corpus import paper_paths

from scholargraph.testing.llm_server import Rule, ScriptedLLMServer

REPO = Path(__file__).resolve().parents[2]
DEMO_PDF = REPO / "src" / "scholargraph" / "demo_corpus" / "futureinternet-06-00061.pdf"
ARTIFACTS = REPO / "test-artifacts" / "browser"
KEY = "browser-test-key-0123456789"
READ_KEY = "browser-read-key-0123456789"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
SOURCE = re.compile(r"^\[(\d+)\][^\n]*\n(.+?)(?=\n\n\[\d+\]|\Z)", re.M | re.S)

pytestmark = [pytest.mark.browser]


def require(condition: bool, reason: str) -> None:
    if not condition:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (required in CI)")
        pytest.skip(reason)


def chromium() -> str | None:
    return shutil.which("chromium") or (str(Path("/usr/bin/chromium")) if Path("/usr/bin/chromium").exists() else None)


def quoting_answer(request: dict) -> str:
    """An answer that quotes the first long sentence of a numbered source and cites it, as a model
    quoting its evidence would (so the passage panel has a sentence to mark)."""
    for match in SOURCE.finditer(user_text(request)):
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(match.group(2).split())):
            if len(sentence.split()) >= 8 and "[" not in sentence:
                return f"{sentence} [{match.group(1)}]"
    return answer_reply(request)


@pytest.fixture(scope="module")
def llm():
    rules = default_rules()
    assert rules[-1].kind == "answer"
    with ScriptedLLMServer(rules=[*rules[:-1], Rule("answer", r"numbered sources", quoting_answer)]) as server:
        yield server


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
def site(llm, tmp_path_factory):
    """An empty workspace: the upload test fills it."""
    server = start_server(tmp_path_factory.mktemp("browser") / "ws", llm.base_url, server={"api_keys": KEY})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def library_site(llm, tmp_path_factory):
    """The three test papers, indexed; an admin and a read-only key."""
    workdir = tmp_path_factory.mktemp("browser-library") / "ws"
    keys = {"api_keys": KEY, "read_only_keys": READ_KEY}
    index_workspace(workdir, paper_paths(), llm.base_url, server=keys)
    server = start_server(workdir, llm.base_url, server=keys)
    yield server
    server.stop()


def open_page(browser, key: str = KEY):
    context = browser.new_context(http_credentials={"username": "reader", "password": key},
                                  viewport={"width": 1400, "height": 860})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


@pytest.fixture
def page(browser):
    context, page, errors = open_page(browser)
    yield page
    context.close()
    assert not errors, errors


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.mark.timeout(900)  # indexes a 13-page PDF: minutes on a busy 2-core machine
def test_upload_ask_cite_graph(page, site):
    # Library: upload a real PDF and watch it reach PROCESSED
    page.goto(site.url + "/#/library")
    page.get_by_test_id("role").wait_for()
    assert page.get_by_test_id("role").inner_text() == "admin"
    page.get_by_test_id("file-input").set_input_files(str(DEMO_PDF))
    status = page.locator("tr[data-doc-id] [data-testid=status]")
    status.filter(has_text="PROCESSED").wait_for(timeout=600_000)
    assert page.locator("tr[data-doc-id]").count() == 1
    assert "futureinternet-06-00061.pdf" in page.locator("tr[data-doc-id]").inner_text()
    shot(page, "library")

    # Ask: streamed answer with citations; a citation opens the passage with paper, section, page
    page.get_by_role("link", name="Ask").click()
    page.get_by_test_id("question").fill("Why do cities need a tool to score their technologies?")
    page.get_by_test_id("ask").click()
    page.locator("[data-testid=answer][data-done=true]").wait_for()
    answer = " ".join(page.get_by_test_id("answer").inner_text().split())

    # Sources: one number per source ("[1]", no list marker beside it), never wrapped
    source = page.locator("[data-testid=sources] li").first
    assert source.inner_text().startswith("[1]") and source.inner_text().count("[1]") == 1
    assert page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=sources] li')).listStyleType") == "none"
    assert page.evaluate("() => { const n = document.querySelector('[data-testid=sources] li .n');"
                         " return n.getClientRects().length === 1 && n.getBoundingClientRect().height < 30; }")

    citation = page.locator("[data-testid=answer] button.cite").first
    citation.click()
    title = page.get_by_test_id("passage-title")
    title.wait_for()
    assert "[" in title.inner_text() and len(title.inner_text()) > 6
    page.get_by_test_id("passage-page").wait_for()
    assert page.get_by_test_id("passage-page").inner_text().startswith(("p. ", "pp. "))
    assert len(page.get_by_test_id("passage-text").inner_text()) > 40
    # the sentence the answer quotes is marked inside the passage
    marked = page.locator("[data-testid=passage-text] mark[data-testid=cited-sentence]")
    marked.wait_for()
    assert " ".join(marked.inner_text().split()).rstrip(".") in answer
    page.get_by_test_id("open-pdf").wait_for()
    shot(page, "ask")
    with page.expect_popup() as popup:
        page.get_by_test_id("open-pdf").click()
    assert popup.value.url.startswith("blob:") and "#page=" in popup.value.url
    popup.value.close()
    assert page.get_by_test_id("history").locator("li").count() == 1

    # Graph: search, open an entity, expand a neighbour, open an edge's evidence
    page.get_by_role("link", name="Graph", exact=True).click()
    first = page.locator("[data-testid=entity-results] button[data-entity-id]").first
    first.wait_for()
    first.click()
    page.get_by_test_id("node-name").wait_for()
    count = page.get_by_test_id("graph-count")
    page.wait_for_function("() => window.__scholargraph && window.__scholargraph.cy.nodes().length > 1")
    before = page.evaluate("() => window.__scholargraph.cy.nodes().length")
    expanded = page.evaluate("() => window.__scholargraph.cy.nodes('.expanded').length")
    page.evaluate("() => { window.__scholargraph.cy.nodes().filter((n) => !n.hasClass('expanded'))"
                  ".sort((a, b) => b.data('degree') - a.data('degree'))[0].emit('tap'); }")  # returns nothing to serialise
    page.wait_for_function(f"() => window.__scholargraph.cy.nodes('.expanded').length > {expanded}")
    after = page.evaluate("() => window.__scholargraph.cy.nodes().length")
    assert after >= before and f"{after} nodes" in count.inner_text()
    page.evaluate("() => { window.__scholargraph.cy.edges()[0].emit('tap'); }")
    page.get_by_test_id("edge-title").wait_for()
    assert page.get_by_test_id("evidence").locator("li").count() >= 1
    shot(page, "graph")

    # Stats
    page.get_by_role("link", name="Stats").click()
    page.get_by_test_id("stat-papers").wait_for()
    assert page.get_by_test_id("stat-papers").inner_text().startswith("1")
    page.get_by_test_id("cost").wait_for()
    shot(page, "stats")


def _rows(page) -> list[str]:
    return [t.split("\n")[0] for t in page.locator("tr[data-doc-id] td.title").all_inner_texts()]


def _range(page, text: str) -> None:
    page.get_by_test_id("library-range").filter(has_text=text).wait_for()


def test_library_search_sort_filter_and_pages(page, library_site):
    page.goto(library_site.url + "/#/library?limit=2")
    _range(page, "1–2 of 3")
    assert page.locator("tr[data-doc-id]").count() == 2
    page.get_by_test_id("library-next").click()
    _range(page, "3–3 of 3")
    assert page.get_by_test_id("library-next").is_disabled()
    page.get_by_test_id("library-prev").click()
    _range(page, "1–2 of 3")

    # sort by year: oldest first, then newest first; the authors and year columns show
    page.locator("th button[data-sort=year]").click()
    page.wait_for_function("() => document.querySelector('tr[data-doc-id] [data-testid=year]')?.textContent === '2019'")
    page.locator("th button[data-sort=year]").click()
    page.wait_for_function("() => document.querySelector('tr[data-doc-id] [data-testid=year]')?.textContent === '2023'")
    first = page.locator("tr[data-doc-id]").first
    assert first.get_by_test_id("authors").inner_text() == "Tomas Lindqvist, Priya Raman"
    assert page.locator("th button[data-sort=year]").get_attribute("aria-sort") == "descending"

    # search and filters
    page.get_by_test_id("library-search").fill("orkney wake")
    _range(page, "1–1 of 1")
    assert _rows(page) == ["Wake Losses in Tidal Stream Arrays Measured at Orkney"]
    page.get_by_test_id("library-search").fill("")
    _range(page, "1–2 of 3")
    page.get_by_test_id("library-year").select_option("2021")
    _range(page, "1–1 of 1")
    assert _rows(page) == ["Tidal Energy Forecasting with Graph Neural Networks"]
    page.get_by_test_id("library-year").select_option("")
    page.get_by_test_id("library-status").select_option("PROCESSED")
    _range(page, "1–2 of 3")
    shot(page, "library-paged")


def test_paper_page_metadata_sections_entities_citations(page, library_site):
    page.goto(library_site.url + "/#/library")
    page.locator("[data-testid=paper-link]", has_text="Battery Storage Scheduling").click()
    page.get_by_test_id("paper-title").wait_for()
    assert page.get_by_test_id("paper-title").inner_text() == "Battery Storage Scheduling for Tidal Energy Converters"
    assert page.get_by_test_id("paper-authors").inner_text() == "Tomas Lindqvist, Priya Raman"
    assert page.get_by_test_id("paper-year").inner_text() == "2023"
    assert page.get_by_test_id("paper-venue").inner_text() == "Energy Systems Conference"
    assert page.get_by_test_id("paper-doi").inner_text() == "10.5555/storage.2023.003"
    assert page.get_by_test_id("paper-file").inner_text() == "storage.json"
    sections = page.get_by_test_id("paper-sections").locator("li").all_inner_texts()
    assert [s.split(" ")[0] for s in sections[:4]] == ["Abstract", "Introduction", "Scheduling", "Evaluation"]
    entities = page.get_by_test_id("paper-entities").locator("a").all_inner_texts()
    assert "Battery Storage" in entities and "Tidegraph" in entities
    assert page.get_by_test_id("paper-cited-by-none").is_visible()
    shot(page, "paper")

    # a reference to a paper of the workspace opens that paper's page, which lists this one as citing it
    page.locator("[data-testid=reference-in-workspace]", has_text="Tidal Energy Forecasting").click()
    page.get_by_test_id("paper-title").filter(has_text="Tidal Energy Forecasting with Graph Neural Networks").wait_for()
    assert "Battery Storage Scheduling" in page.get_by_test_id("paper-cited-by").inner_text()
    # an entity chip opens the graph explorer on it
    page.get_by_test_id("paper-entities").locator("a", has_text="Tidegraph").click()
    page.get_by_test_id("node-name").filter(has_text="Tidegraph").wait_for()


LABEL_OVERLAPS = """() => {
  const cy = window.__scholargraphOverview.cy;
  const boxes = cy.nodes('.labelled').map((n) => n.renderedBoundingBox({ includeNodes: false, includeEdges: false, includeLabels: true }));
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.x1 < b.x2 - 1 && b.x1 < a.x2 - 1 && a.y1 < b.y2 - 1 && b.y1 < a.y2 - 1) overlaps++;
  }
  return { labels: boxes.length, overlaps, nodes: cy.nodes().length };
}"""


def test_overview_clusters_filters_labels_and_sampling(page, library_site):
    page.goto(library_site.url + "/#/overview")
    page.get_by_test_id("overview-notice").filter(has_text="communities").wait_for()
    page.wait_for_function("() => window.__scholargraphOverview && window.__scholargraphOverview.labelled > 0")
    total = page.evaluate("() => window.__scholargraphOverview.data.total_nodes")
    state = page.evaluate(LABEL_OVERLAPS)
    assert state["nodes"] == total > 10 and state["labels"] >= 1 and state["overlaps"] == 0
    # one colour per community, and the legend names them
    colours = page.evaluate("""() => { const seen = {}; window.__scholargraphOverview.cy.nodes().forEach((n) => {
        const c = n.data('community') || 'none'; (seen[c] = seen[c] || new Set()).add(n.data('colour')); });
        return Object.values(seen).map((s) => s.size); }""")
    assert len(colours) > 1 and set(colours) == {1}
    assert page.get_by_test_id("legend-key").count() >= 2
    shot(page, "overview")

    # zoomed in: labels are placed again, still without overlaps
    page.evaluate("() => { const cy = window.__scholargraphOverview.cy; cy.zoom({ level: cy.zoom() * 2.5, renderedPosition: { x: 400, y: 300 } }); }")
    page.wait_for_timeout(400)
    assert page.evaluate(LABEL_OVERLAPS)["overlaps"] == 0

    # filter by type, then by paper
    kind = page.evaluate("() => Object.keys(window.__scholargraphOverview.data.types)[0]")
    page.get_by_test_id("overview-type").select_option(kind)
    page.wait_for_function(f"() => window.__scholargraphOverview.cy.nodes().every((n) => n.data('type') === {json.dumps(kind)})")
    page.get_by_test_id("overview-type").select_option("")
    page.wait_for_function(f"() => window.__scholargraphOverview.cy.nodes().length === {total}")
    paper = page.get_by_test_id("overview-paper").locator("option", has_text="Wake Losses").get_attribute("value")
    page.get_by_test_id("overview-paper").select_option(paper)
    page.wait_for_function(f"() => {{ const n = window.__scholargraphOverview.cy.nodes(); return n.length > 0 && n.length < {total}; }}")
    names = page.evaluate("() => window.__scholargraphOverview.cy.nodes().map((n) => n.data('name'))")
    assert "Turbine Wakes" in names and "Battery Storage" not in names

    # beyond the limit: the most connected only, and the page says so
    page.goto(library_site.url + "/#/overview?limit=10")
    page.get_by_test_id("overview-sampled").wait_for()
    assert f"10 most connected of {total}" in page.get_by_test_id("overview-sampled").inner_text()
    page.wait_for_function("() => window.__scholargraphOverview.cy.nodes().length === 10")


def test_the_overview_shows_the_filter_chosen_last_when_an_older_answer_arrives_late(page, library_site):
    from playwright.sync_api import Error as PlaywrightError

    page.goto(library_site.url + "/#/overview")
    page.wait_for_function("() => window.__scholargraphOverview && window.__scholargraphOverview.labelled > 0")
    total = page.evaluate("() => window.__scholargraphOverview.data.total_nodes")
    held, settled = [], []
    page.on("requestfinished", lambda r: settled.append(r))
    page.on("requestfailed", lambda r: settled.append(r))
    # the whole graph at a new limit is asked first and answered last; the paper is asked second
    page.route("**/api/graph/overview?*", lambda route: held.append(route) if "document=" not in route.request.url
               else route.continue_())
    page.get_by_test_id("overview-limit").select_option("500")
    paper = page.get_by_test_id("overview-paper").locator("option", has_text="Wake Losses").get_attribute("value")
    page.get_by_test_id("overview-paper").select_option(paper)
    page.wait_for_function(f"() => {{ const n = window.__scholargraphOverview.cy.nodes(); return n.length > 0 && n.length < {total}; }}")
    shown = page.evaluate("() => window.__scholargraphOverview.cy.nodes().length")
    assert len(held) == 1
    try:
        held[0].continue_()
    except PlaywrightError:
        pass  # the page gave up on that request already
    for _ in range(100):  # until the late answer has arrived or the request is known to be dropped
        if held[0].request in settled:
            break
        page.wait_for_timeout(50)
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__scholargraphOverview.cy.nodes().length") == shown < total
    assert "Battery Storage" not in page.evaluate("() => window.__scholargraphOverview.cy.nodes().map((n) => n.data('name'))")


def test_communities_and_their_reports(browser, page, library_site):
    context, reader, errors = open_page(browser, READ_KEY)  # a read-only key sees no write button
    reader.goto(library_site.url + "/#/communities")
    reader.get_by_test_id("reports-message").filter(has_text="not written yet").wait_for()
    assert reader.get_by_test_id("community").count() >= 2 and not reader.get_by_test_id("write-reports").is_visible()
    context.close()
    assert not errors, errors

    page.goto(library_site.url + "/#/communities")
    page.get_by_test_id("reports-message").filter(has_text="calls the LLM").wait_for()
    assert page.get_by_test_id("community-no-report").count() >= 1
    page.get_by_test_id("write-reports").click()
    page.get_by_test_id("reports-written").wait_for(timeout=120_000)
    assert "Every community has its report" in page.get_by_test_id("reports-message").inner_text()
    assert page.get_by_test_id("community-summary").count() >= 1
    assert not page.get_by_test_id("write-reports").is_visible()
    shot(page, "communities")


def test_query_settings_top_k_mode_context_only_and_stream(page, library_site):
    page.goto(library_site.url + "/#/ask")
    page.get_by_test_id("question").fill("How do Turbine Wakes change the forecasts of Tidal Energy?")
    page.get_by_test_id("top-k").fill("2")
    page.get_by_test_id("mode").select_option("naive")
    page.get_by_test_id("context-only").check()
    assert page.get_by_test_id("ask").inner_text() == "Retrieve"
    with page.expect_request(lambda r: r.url.endswith("/api/retrieve")) as request:
        page.get_by_test_id("ask").click()
    assert request.value.post_data_json == {"question": "How do Turbine Wakes change the forecasts of Tidal Energy?",
                                            "mode": "naive", "top_k": 2}
    page.get_by_test_id("context-only-note").wait_for()
    assert 1 <= page.locator("[data-testid=sources] li").count() <= 2

    # a whole (not streamed) answer with the same settings
    page.get_by_test_id("context-only").uncheck()
    page.get_by_test_id("stream").uncheck()
    with page.expect_request(lambda r: r.url.endswith("/api/ask")) as request:
        page.get_by_test_id("ask").click()
    body = request.value.post_data_json
    assert (body["stream"], body["top_k"], body["mode"]) == (False, 2, "naive")
    page.locator("[data-testid=answer][data-done=true][data-streamed=false]").wait_for()
    assert page.locator("[data-testid=answer] button.cite").count() >= 1
    shot(page, "ask-settings")

    # the settings are remembered
    page.reload()
    page.get_by_test_id("top-k").wait_for()
    assert page.get_by_test_id("top-k").input_value() == "2" and page.get_by_test_id("mode").input_value() == "naive"
    assert not page.get_by_test_id("stream").is_checked() and not page.get_by_test_id("context-only").is_checked()


def test_read_only_key_sees_no_upload(browser, site, tmp_path):
    context = browser.new_context(http_credentials={"username": "x", "password": "wrong-key"})
    page = context.new_page()
    response = page.goto(site.url + "/")
    assert response.status == 401
    context.close()


def test_offline_graph_page_uses_the_overview_viewer(page, tmp_path):
    """`scholargraph plot`'s graph.html opens from disk, drawn by the Overview's viewer: labels that do
    not overlap, a click shows the entity with its neighbours, the legend hides a community, the
    search box marks names."""
    from scholargraph import KnowledgeBase

    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}, communities={"reports": "extractive"},
                       progress=False) as kb:
        assert kb.insert(paper_paths()).ok
        path = Path(kb.plot(tmp_path / "plots").files["graph_view"])
    page.goto(path.as_uri())
    page.wait_for_function("() => window.__scholargraphGraphView && window.__scholargraphGraphView.labelled > 0")
    state = page.evaluate(LABEL_OVERLAPS.replace("__scholargraphOverview", "__scholargraphGraphView"))
    assert state["nodes"] > 10 and state["labels"] >= 1 and state["overlaps"] == 0
    shot(page, "offline-graph")

    top = page.evaluate("""() => { const n = window.__scholargraphGraphView.cy.nodes().max((n) => n.data('degree')).ele;
        const p = n.renderedPosition(); return { name: n.data('name'), x: p.x, y: p.y }; }""")
    page.locator("#view").click(position={"x": top["x"], "y": top["y"]})
    panel = page.locator("#panel")
    panel.filter(has_text="neighbours:").wait_for()
    assert top["name"] in panel.inner_text() and "degree" in panel.inner_text()

    page.locator("#legend .item").first.click()
    hidden = page.evaluate("() => window.__scholargraphGraphView.cy.nodes('.hidden').length")
    assert hidden > 0
    page.locator("#search").fill(top["name"][:6])
    assert page.evaluate("() => window.__scholargraphGraphView.cy.nodes('.found').map((n) => n.data('name'))")
