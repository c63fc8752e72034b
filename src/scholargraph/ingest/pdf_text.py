"""Text and size helpers shared by the PDF layout analysis (:mod:`.pdf_layout`).

Ligatures and soft hyphens, bold font names, letter-spaced titles, de-hyphenating line joins,
and the tolerance under which two font sizes count as the same.
"""

from __future__ import annotations

import functools
import re

LIGATURES = {
    "ﬀ": "ff",
    "ﬁ": "fi",
    "ﬂ": "fl",
    "ﬃ": "ffi",
    "ﬄ": "ffl",
    "ﬅ": "st",
    "ﬆ": "st",
    "\u00ad": "",
    "\u00a0": " ",
    "\uf0b7": "•",
    "\uf0a7": "•",
}
_LIG_RE = re.compile("|".join(LIGATURES))
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi|medi|-b$|,b$|-bd|tb$|\.b$|^cmbx|^cmb\d", re.I)
_WS = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """Ligatures to letters, soft hyphens removed, no-break spaces to spaces."""
    return _LIG_RE.sub(lambda m: LIGATURES[m.group(0)], text)


@functools.lru_cache(maxsize=4096)
def is_bold_font(name: str) -> bool:
    """Bold from a font name: Bold/Black/Heavy/Semibold/Medium, "-B", ",Bold", TeX "...TB"."""
    base = name.split("+", 1)[-1]  # drop the subset prefix ABCDEF+
    return bool(_BOLD_RE.search(base))


def collapse_letter_spacing(text: str) -> str:
    """'A T T E N T I O N  I S' -> 'ATTENTION IS' when the text is mostly single letters."""
    tokens = text.split()
    singles = sum(1 for t in tokens if len(t) == 1)
    if len(tokens) < 4 or singles < 0.7 * len(tokens):
        return text
    words = re.split(r"\s{2,}", text.strip())
    if len(words) == 1:
        # single spaces everywhere: keep multi-letter tokens as word boundaries
        out, cur = [], ""
        for tok in tokens:
            if len(tok) == 1 and tok.isalnum():
                cur += tok
            else:
                if cur:
                    out.append(cur)
                out.append(tok) if len(tok) > 1 else out.append(tok)
                cur = ""
        if cur:
            out.append(cur)
        return " ".join(out).replace(" :", ":").replace(" ,", ",")
    return " ".join(w.replace(" ", "") for w in words)


def append_line(out: str, part: str, keep_hyphen: bool = False, new_paragraph: bool = False) -> str:
    """Append one wrapped line: "meth-" + "ods" -> "methods" (``keep_hyphen``: "Long-" + "form")."""
    part = part.strip()
    if not part or not out:
        return out or part
    if new_paragraph:
        return f"{out}\n\n{part}"
    if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and part[:1].isalpha():
        word = out.rsplit(None, 1)[-1]
        keep = keep_hyphen or "-" in word[:-1] or not part[:1].islower()
        return out + part if keep else out[:-1] + part
    return f"{out} {part}"


def join_lines(parts: list[str], keep_hyphen: bool = False) -> str:
    out = ""
    for part in parts:
        out = append_line(out, part, keep_hyphen)
    return out


def same_size(a: float, b: float) -> bool:
    """Two font sizes that are the same for layout purposes (within 0.6 pt or 5%)."""
    return abs(a - b) <= max(0.6, 0.05 * max(a, b))


def squash_ws(text: str) -> str:
    """``text`` cleaned (:func:`clean_text`) with whitespace runs collapsed to one space, stripped."""
    return _WS.sub(" ", clean_text(text)).strip()
