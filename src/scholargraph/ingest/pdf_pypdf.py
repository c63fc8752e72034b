"""Default PDF backend: pypdf (BSD-3-Clause), pure Python.

Spans come from ``page.extract_text(visitor_text=...)``: pypdf reports each text run with its
text matrix, the current transformation matrix, the font resource and the ``Tf`` size. The
rendered size is ``Tf size x`` the vertical scale of ``tm x cm``; a matrix with a rotation
component marks rotated text (the arXiv side stamp). pypdf gives no glyph widths here, so a span's
right edge is an estimate (used only for spacing and line-length heuristics).
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import LoadError
from .pdf_layout import OutlineItem, PageLayout, PdfLayout, Span, is_bold_font
from .pdf_spacing import prepare_page

log = logging.getLogger(__name__)
NAME = "pypdf"
ENCRYPTED = "encrypted PDF: a password is required"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CHAR_WIDTH = 0.5  # average glyph width in em, for the estimated right edge


def _mult(m: list[float], n: list[float]) -> list[float]:
    return [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]


class _FontInfo:
    """Font name and weight per font resource (cached: resolving descriptors is not free)."""

    def __init__(self) -> None:
        self._cache: dict[Any, tuple[Any, tuple[str, bool]]] = {}

    def get(self, font: Any) -> tuple[str, bool]:
        if font is None:
            return "", False
        ref = getattr(font, "indirect_reference", None) or font
        key = (ref.idnum, ref.generation) if hasattr(ref, "idnum") else id(font)
        if key not in self._cache:  # the object is kept alive so that its id() is not reused
            self._cache[key] = (font, self._resolve(font))
        return self._cache[key][1]

    @staticmethod
    def _resolve(font: Any) -> tuple[str, bool]:
        try:
            font = font.get_object()
            name = str(font.get("/BaseFont", "")).lstrip("/")
            desc = font.get("/FontDescriptor")
            if desc is None and "/DescendantFonts" in font:
                desc = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
            desc = desc.get_object() if desc is not None else {}
            weight = float(desc.get("/FontWeight", 0) or 0)
            force_bold = int(desc.get("/Flags", 0) or 0) & (1 << 18)
            return name, is_bold_font(name) or weight >= 600 or bool(force_bold)
        except Exception:  # a broken font dict must not lose the page
            return "", False


def _page_spans(page: Any, number: int, fonts: _FontInfo) -> PageLayout:
    left, top, width, height = _box(page)
    layout = PageLayout(number=number, width=width, height=height)

    def visit(text: str, cm: list[float], tm: list[float], font: Any, font_size: float) -> None:
        if not text or not text.strip(" \n"):
            return
        m = _mult([float(v) for v in tm], [float(v) for v in cm])
        scale = math.hypot(m[2], m[3]) or 1.0
        size = abs(float(font_size or 0.0)) * scale
        if size <= 0.5:
            return
        rotated = abs(m[1]) > 0.05 * scale or abs(m[2]) > 0.05 * scale
        name, bold = fonts.get(font)
        x, base = m[4] - left, top - m[5]
        for k, piece in enumerate(_CONTROL.sub("", text).split("\n")):
            if not piece.strip():
                continue
            y = base + k * 1.2 * size
            width = _CHAR_WIDTH * size * len(piece) * (math.hypot(m[0], m[1]) / scale)
            layout.spans.append(
                Span(piece, round(size, 2), bold, name, x, y - 0.8 * size, x + width, y + 0.2 * size, number, rotated)
            )

    try:
        prepare_page(page, getattr(page, "pdf", None))
    except Exception:  # the rewrite is a refinement: a page it cannot read is extracted as it is
        log.debug("word spacing not folded on page %d", number, exc_info=True)
    page.extract_text(visitor_text=visit)
    return layout


def _box(page: Any) -> tuple[float, float, float, float]:
    """(left, top, width, height) of the visible page; US Letter when the boxes are unreadable."""
    for name in ("cropbox", "mediabox"):
        try:
            box = getattr(page, name)
            return float(box.left), float(box.top), float(box.width), float(box.height)
        except Exception:
            continue
    return 0.0, 792.0, 612.0, 792.0


def _outline(reader: Any) -> list[OutlineItem]:
    items: list[OutlineItem] = []

    def walk(nodes: list[Any], level: int) -> None:
        for node in nodes:
            if isinstance(node, list):
                walk(node, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(node)
            except Exception:
                page = None
            title = str(getattr(node, "title", "") or "")
            items.append(OutlineItem(level, title, page + 1 if page is not None and page >= 0 else None))

    try:
        walk(reader.outline, 1)
    except Exception:
        return []
    return items


_PAGE_OBJ = re.compile(rb"(\d+)\s+0\s+obj\s*<<(?:(?!endobj).){0,400}?/Type\s*/Page(?![s\w])", re.S)


def _salvage(data: bytes) -> Any | None:
    """A truncated file often loses its page tree and trailer (written last): give pypdf a new
    page tree over the page objects still present. Pages in compressed object streams are lost."""
    from pypdf import PdfReader

    pages = [m.group(1) for m in _PAGE_OBJ.finditer(data)]
    if not pages:
        return None
    kids = b" ".join(p + b" 0 R" for p in pages)
    tail = (
        b"\n999998 0 obj\n<< /Type /Pages /Kids [" + kids + b"] /Count " + str(len(pages)).encode() + b" >>\nendobj\n"
        b"999999 0 obj\n<< /Type /Catalog /Pages 999998 0 R >>\nendobj\n"
        b"trailer\n<< /Root 999999 0 R /Size 1000000 >>\nstartxref\n0\n%%EOF\n"
    )
    try:
        reader = PdfReader(io.BytesIO(data + tail), strict=False)
        return reader if len(reader.pages) else None
    except Exception:
        return None


def _open(path: Path) -> tuple[Any, list[str]]:
    from pypdf import PdfReader

    warnings: list[str] = []
    try:
        reader = PdfReader(str(path), strict=False)
        _decrypt(reader, path)
        len(reader.pages)
    except LoadError:
        raise
    except Exception as exc:
        salvaged = _salvage(path.read_bytes())
        if salvaged is None:
            raise LoadError(str(path), f"damaged or truncated PDF: {exc}") from exc
        reader = salvaged
        warnings.append(f"damaged or truncated PDF ({exc}); pages were recovered by scanning the file")
    return reader, warnings


def _decrypt(reader: Any, path: Path) -> None:
    if not reader.is_encrypted:
        return
    try:
        ok = reader.decrypt("")
    except Exception as exc:  # e.g. AES without the optional crypto dependency
        raise LoadError(str(path), f"{ENCRYPTED} (or cannot be decrypted here: {exc})") from exc
    if not ok:
        raise LoadError(str(path), ENCRYPTED)


@contextmanager
def _quiet() -> Iterator[None]:
    """pypdf logs every repaired oddity of a broken file; the loader reports what matters."""
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def extract(path: Path) -> PdfLayout:
    """Read every page; a page that fails is recorded with its error and skipped later."""
    with _quiet():
        reader, warnings = _open(path)
        fonts = _FontInfo()
        layouts = []
        for number, page in enumerate(reader.pages, start=1):
            try:
                layouts.append(_page_spans(page, number, fonts))
            except Exception as exc:
                layouts.append(PageLayout(number, 0.0, 0.0, error=f"{type(exc).__name__}: {exc}"))
        meta = _metadata(reader)
        outline = _outline(reader)
    return PdfLayout(layouts, outline, meta.get("title", ""), meta.get("author", ""), NAME, warnings, gap_spaces=False,
                     meta_date=meta.get("date", ""))


def _metadata(reader: Any) -> dict[str, str]:
    try:
        info = reader.metadata or {}
        return {"title": str(info.get("/Title", "") or ""), "author": str(info.get("/Author", "") or ""),
                "date": str(info.get("/CreationDate", "") or "")}
    except Exception:
        return {}
