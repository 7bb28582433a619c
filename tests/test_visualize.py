"""The HTML renderer on hand-made Docs: DOM attributes, escaping, parse source notes,
label attention, page/fragment/minify/Jupyter handling. The browser test is
``test_render_browser.py``."""

from __future__ import annotations

import configparser
import fnmatch
import re
import sys
import types
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import spacy
from markupsafe import Markup
from spacy.language import Language
from spacy.tokens import Doc

import spacy_lisa
from spacy_lisa.frames import set_srl_frames
from spacy_lisa.render import HTMLMarkup, colors, layout, render, templates

Element = Tuple[str, Dict[str, Optional[str]]]

VOID = {"meta", "br", "img", "input", "link", "path"}


class DomCollector(HTMLParser):
    """Elements with their attributes, checking that tags nest properly."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: List[Element] = []
        self.stack: List[str] = []
        self.text: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, attr: str, value: Optional[str] = None) -> List[Dict[str, Optional[str]]]:
        return [a for _, a in self.elements if attr in a and (value is None or a[attr] == value)]


def parse(markup: str) -> DomCollector:
    dom = DomCollector()
    dom.feed(markup)
    dom.close()
    assert dom.stack == [], f"unclosed tags: {dom.stack}"
    return dom


@pytest.fixture(scope="module")
def nlp() -> Language:
    return spacy.blank("en")


def sold_doc(nlp: Language, *, with_parse: bool = True, with_attention: bool = True) -> Doc:
    words = ["John", "sold", "the", "car", "."]
    heads = [1, 1, 3, 1, 1]
    deps = ["nsubj", "ROOT", "det", "dobj", "punct"]
    doc = Doc(nlp.vocab, words=words)
    set_srl_frames(
        doc,
        [
            {
                "predicate": [1, 2],
                "roleset": "sell.01",
                "lemma": "sell",
                "roles": [[0, 1, "ARG0"], [2, 4, "ARG1"]],
            }
        ],
    )
    if with_parse:
        doc._.srl_parse = {"heads": heads, "deps": deps}
        doc._.srl_parse_source = "model"
    if with_attention:
        doc._.srl_label_attention = {
            "heads": ["ARG0", "ARG1"],
            "weights": [[0.7, 0.1, 0.1, 0.05, 0.05], [0.0, 0.1, 0.2, 0.6, 0.1]],
        }
    return doc


def test_page_has_frames_roles_parse_and_attention(nlp: Language) -> None:
    doc = sold_doc(nlp)
    markup = render(doc)
    assert isinstance(markup, str) and markup.startswith("<!DOCTYPE html>")
    dom = parse(markup)
    frames = dom.having("data-frame")
    assert [(f["data-frame"], f["data-predicate"], f["data-roleset"]) for f in frames] == [
        ("0", "sold", "sell.01")
    ]
    roles = [a for a in dom.having("data-role-label") if "lisa-role" in (a.get("class") or "")]
    assert [(r["data-role-label"], r["data-start"], r["data-end"]) for r in roles] == [
        ("ARG0", "0", "1"),
        ("ARG1", "2", "4"),
    ]
    legend = [
        a["data-role-label"]
        for a in dom.having("data-role-label")
        if "legend" in (a.get("class") or "")
    ]
    assert legend == ["V", "ARG0", "ARG1"]
    predicate = [
        a for a in dom.having("data-predicate") if "lisa-predicate" in (a.get("class") or "")
    ]
    assert [(p["data-start"], p["data-end"]) for p in predicate] == [("1", "2")]
    arcs = dom.having("data-dep")
    assert sorted((a["data-child"], a["data-head"], a["data-dep"]) for a in arcs) == [
        ("0", "1", "nsubj"),
        ("1", "1", "ROOT"),
        ("2", "3", "det"),
        ("3", "1", "dobj"),
        ("4", "1", "punct"),
    ]
    assert dom.having("data-parse-source", "model")
    assert "source: model" in "".join(dom.text)
    rows = dom.having("data-head")
    heads = [r["data-head"] for r in rows if "lisa-attention-row" in (r.get("class") or "")]
    assert heads == ["ARG0", "ARG1"]
    cells = [a for a in dom.having("data-weight")]
    assert len(cells) == 2 * len(doc)
    assert cells[0]["data-weight"] == "0.7"


def test_no_network_resources(nlp: Language) -> None:
    markup = render(sold_doc(nlp))
    assert "Content-Security-Policy" in markup and "default-src 'none'" in markup
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", markup)
    assert "@import" not in markup and "url(" not in markup
    assert "<script" not in markup


def test_text_is_escaped(nlp: Language) -> None:
    words = ["<script>alert(1)</script>", "said", "\"&'"]
    doc = Doc(nlp.vocab, words=words)
    set_srl_frames(doc, [{"predicate": [1, 2], "roleset": "<b>", "roles": [[0, 1, "<i>"]]}])
    doc.user_data["title"] = "<h1>title</h1>"
    markup = render(doc, title="<t>")
    assert "<script>" not in markup and "<b>" not in markup and "<i>" not in markup
    assert "<h1>" not in markup and "<t>" not in markup
    dom = parse(markup)
    text = "".join(dom.text)
    assert "<script>alert(1)</script>" in text and "<h1>title</h1>" in text
    assert dom.having("data-role-label", "<i>") and dom.having("data-roleset", "<b>")


def test_parse_source_falls_back_to_the_doc_parse(nlp: Language) -> None:
    doc = Doc(nlp.vocab, words=["Dogs", "bark"], heads=[1, 1], deps=["nsubj", "ROOT"])
    set_srl_frames(doc, [{"predicate": [1, 2], "roles": [[0, 1, "ARG0"]]}])
    dom = parse(render(doc))
    assert dom.having("data-parse-source", "doc-parse")
    assert "doc._.srl_parse is not set" in "".join(dom.text)
    assert {a["data-dep"] for a in dom.having("data-dep")} == {"nsubj", "ROOT"}

    doc._.srl_parse = {"heads": [1, 1], "deps": ["nsubj", "root"]}
    doc._.srl_parse_source = "gold"
    dom = parse(render(doc))
    assert dom.having("data-parse-source", "gold")
    assert "the gold parse" in "".join(dom.text)


def test_without_any_parse_or_attention(nlp: Language) -> None:
    doc = sold_doc(nlp, with_parse=False, with_attention=False)
    dom = parse(render(doc))
    assert not dom.having("data-dep") and not dom.having("data-weight")
    assert "No dependency arcs" in "".join(dom.text)
    assert dom.having("data-frame")
    dom = parse(render(sold_doc(nlp), show_parse=False, show_attention=False))
    assert not dom.having("data-dep") and not dom.having("data-weight")


def test_sentences_and_frame_indices(nlp: Language) -> None:
    doc = Doc(nlp.vocab, words=["A", "fell", ".", "B", "rose", "and", "fell", "."])
    for i in range(len(doc)):
        doc[i].is_sent_start = i in (0, 3)
    set_srl_frames(
        doc,
        [
            {"predicate": [1, 2], "roles": [[0, 1, "ARG1"]]},
            {"predicate": [4, 5], "roles": [[3, 4, "ARG1"]]},
            {"predicate": [6, 7], "roles": [[3, 4, "ARG1"]]},
        ],
    )
    dom = parse(render(doc))
    sentences = dom.having("data-sentence")
    assert [(s["data-sentence"], s["data-start"], s["data-end"]) for s in sentences] == [
        ("0", "0", "3"),
        ("1", "3", "8"),
    ]
    assert [f["data-frame"] for f in dom.having("data-frame")] == ["0", "1", "2"]


def test_role_outside_the_sentence_is_listed(nlp: Language) -> None:
    doc = Doc(nlp.vocab, words=["We", "left", ".", "Home"])
    for i in range(len(doc)):
        doc[i].is_sent_start = i in (0, 3)
    set_srl_frames(doc, [{"predicate": [1, 2], "roles": [[0, 1, "ARG0"], [3, 4, "ARG1"]]}])
    dom = parse(render(doc))
    outside = [
        a for a in dom.having("data-role-label") if "lisa-role-outside" in (a.get("class") or "")
    ]
    assert [(a["data-role-label"], a["data-start"]) for a in outside] == [("ARG1", "3")]


def test_empty_and_unannotated_docs(nlp: Language) -> None:
    empty = Doc(nlp.vocab, words=[])
    plain = Doc(nlp.vocab, words=["Just", "words"])
    text = "".join(parse(render([empty, plain])).text)
    assert "Empty document" in text and "no SRL annotation" in text


def test_fragment_minify_and_markup_type(nlp: Language) -> None:
    doc = sold_doc(nlp)
    fragment = render(doc, page=False)
    assert fragment.startswith('<div class="lisa-srl">') and "<html" not in fragment
    assert "<style>" in fragment  # a fragment carries its own (scoped) CSS
    parse(fragment)
    minified = render(doc, minify=True)
    assert "\n" not in minified.split("<body", 1)[1]
    assert isinstance(minified, HTMLMarkup) and minified._repr_html_() == str(minified)
    # minify never touches text: whitespace tokens keep their (visible) form
    ws = Doc(nlp.vocab, words=["a", "    ", "b"], spaces=[False, False, False])
    set_srl_frames(ws, [])
    assert "␣␣␣␣" in render(ws, minify=True)


def test_package_render_delegates(nlp: Language) -> None:
    doc = sold_doc(nlp)
    assert spacy_lisa.render(doc, jupyter=False) == render(doc, jupyter=False)


def test_jupyter_displays_the_fragment(nlp: Language, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: List[str] = []
    display_mod = types.ModuleType("IPython.display")

    class HTML:
        def __init__(self, data: str) -> None:
            self.data = data

    display_mod.HTML = HTML  # type: ignore[attr-defined]
    display_mod.display = lambda obj: shown.append(obj.data)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setitem(sys.modules, "IPython.display", display_mod)
    assert render(sold_doc(nlp), jupyter=True) == ""
    assert len(shown) == 1
    assert shown[0].startswith('<div class="lisa-srl">') and "<style>" in shown[0]
    assert "<html" not in shown[0]


def test_colours(nlp: Language) -> None:
    doc = sold_doc(nlp)
    markup = render(doc, colors={"ARG0": "#123456"})
    assert "background: #123456" in markup
    with pytest.raises(ValueError, match="E303"):
        render(doc, colors={"ARG0": "red; background-image: url(http://x)"})
    # C-/R- and CoNLL-2005 short labels share the colour of their base label
    d2 = Doc(nlp.vocab, words=["a", "b", "c", "d"])
    set_srl_frames(
        d2, [{"predicate": [1, 2], "roles": [[0, 1, "A0"], [2, 3, "C-ARG0"], [3, 4, "X-NEW"]]}]
    )
    m2 = render(d2, colors={"ARG0": "#abcdef"})
    assert m2.count("background: #abcdef") >= 3  # legend A0, legend C-ARG0, cells...
    assert "hsl(" in m2  # an unknown label gets a stable hashed hue
    assert render(d2) == render(d2)


@pytest.mark.parametrize(
    "value, message",
    [
        ({"heads": [1, 1]}, "E301"),
        ({"heads": [1, 9, 1, 1, 1]}, "E301"),
        ({"heads": [1, 1, 3, 1, 1], "deps": ["x"]}, "E301"),
    ],
)
def test_malformed_parse_is_an_error(nlp: Language, value: dict, message: str) -> None:
    doc = sold_doc(nlp, with_parse=False)
    doc._.srl_parse = value
    with pytest.raises(ValueError, match=message):
        render(doc)


@pytest.mark.parametrize(
    "value",
    [
        {"heads": ["a"], "weights": [[0.1] * 4]},
        {"heads": ["a", "b"], "weights": [[0.2] * 5]},
        {"heads": ["a"], "weights": [[0.2, 0.2, "x", 0.2, 0.2]]},
        {"heads": ["a"], "weights": [[0.2, 0.2, float("nan"), 0.2, 0.2]]},
        [[0.2] * 5],
    ],
)
def test_malformed_label_attention_is_an_error(nlp: Language, value: object) -> None:
    doc = sold_doc(nlp, with_attention=False)
    doc._.srl_label_attention = value
    with pytest.raises(ValueError, match="E302"):
        render(doc)


def test_bad_input_type(nlp: Language) -> None:
    with pytest.raises(ValueError, match="E300"):
        render("not a doc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="E300"):
        render(sold_doc(nlp)[0:2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="E300"):
        render(42)  # type: ignore[arg-type]


# ------------------------------------------------------------------ escaping --------
def test_attribute_values_cannot_break_out(nlp: Language) -> None:
    label = 'x" onmouseover="alert(1)'
    roleset = "' onclick='y"
    doc = Doc(nlp.vocab, words=["a&b", "<c>", '"d"'])
    set_srl_frames(doc, [{"predicate": [1, 2], "roleset": roleset, "roles": [[0, 1, label]]}])
    doc._.srl_parse = {"heads": [1, 1, 1], "deps": ['"q"', "<root>", "a&b"]}
    doc._.srl_label_attention = {"heads": ['h"&<'], "weights": [[0.1, 0.2, 0.3]]}
    dom = parse(render(doc))
    attrs = {name for _, a in dom.elements for name in a}
    assert not attrs & {"onmouseover", "onclick", "alert(1)"}
    assert dom.having("data-role-label", label) and dom.having("data-roleset", roleset)
    assert {a["data-dep"] for a in dom.having("data-dep")} == {'"q"', "<root>", "a&b"}
    assert dom.having("data-head", 'h"&<')
    text = "".join(dom.text)
    assert "a&b" in text and "<c>" in text and '"d"' in text


def test_markup_titles_are_escaped_too(nlp: Language) -> None:
    # Jinja2 trusts objects with __html__; the titles are coerced to str first
    doc = sold_doc(nlp)
    doc.user_data["title"] = Markup("<i>doc</i>")
    markup = render(doc, title=Markup("<b>page</b>"))
    assert "<i>doc</i>" not in markup and "<b>page</b>" not in markup
    assert "&lt;i&gt;doc&lt;/i&gt;" in markup and "&lt;b&gt;page&lt;/b&gt;" in markup


def test_minify_keeps_text_with_spaces_and_newlines(nlp: Language) -> None:
    doc = Doc(nlp.vocab, words=["a  b", "c\nd", "e"], spaces=[True, True, False])
    set_srl_frames(doc, [{"predicate": [2, 3], "roles": [[0, 2, "ARG1"]]}])
    for minify in (False, True):
        markup = render(doc, minify=minify)
        assert ">a  b<" in markup and ">c\nd<" in markup
        assert 'title="ARG1: a  b c\nd"' in markup
    assert "\n " not in render(doc, minify=True).replace("c\nd", "")


# --------------------------------------------------------------- pure geometry ------
def test_column_widths_fit_words_and_one_token_labels() -> None:
    assert layout.column_widths(["John", "a", "   "]) == [54, 34, 45]
    assert layout.column_widths(["John", "a"], [(0, "ARGM-TMP"), (1, "V")]) == [74, 34]
    assert layout.head_width([]) == layout.MIN_HEAD_PX
    assert layout.head_width(["abcdefghijklmn"]) == 112
    assert layout.head_width(["x" * 40]) == layout.MAX_HEAD_PX
    assert layout.column_centers([10, 20, 30]) == [5, 20, 45]
    assert layout.grid_columns(96, [40, 50]) == "96px 40px 50px"
    assert layout.shown(" \n\t") == "␣⏎⇥" and layout.shown("a b") == "a b"


def test_arc_levels_nest_shorter_arcs_below_longer_ones() -> None:
    assert layout.arc_levels([]) == []
    assert layout.arc_levels([(0, 1), (1, 2), (0, 2)]) == [1, 1, 2]
    assert layout.arc_levels([(0, 3), (1, 2)]) == [2, 1]
    assert layout.arc_levels([(0, 2), (1, 3)]) == [1, 2]  # crossing: the later one above


def test_layout_arcs_geometry() -> None:
    arcs = layout.layout_arcs([1, 1, 1], ["a", "ROOT", "b"], 0, 3, [40, 40, 40])
    assert (arcs.width, arcs.height, arcs.outside) == (120, 56, 0)
    left, right, root = arcs.arcs
    assert (left.child, left.head, left.dep, left.root) == (0, 1, "a", False)
    assert left.path == "M24.0,52 C24.0,20.0 56.0,20.0 56.0,52"
    assert left.arrow == "M20.0,45 L28.0,45 L24.0,52 Z"  # the tip on the dependent
    assert (left.label_x, left.label_y) == ("40.0", "25.0")
    assert right.path == "M96.0,52 C96.0,20.0 64.0,20.0 64.0,52"
    assert (root.child, root.head, root.dep, root.root) == (1, 1, "ROOT", True)
    assert root.path == "M60.0,14 L60.0,52" and root.label_y == "11"


def test_layout_arcs_offsets_outside_heads_and_rtl() -> None:
    # the second sentence of a doc: tokens 2..5; token 2's head lies in sentence one
    heads, deps = [1, 1, 0, 4, 4], ["x", "ROOT", "dep", "", ""]
    arcs = layout.layout_arcs(heads, deps, 2, 5, [40, 50, 60])
    assert arcs.outside == 1
    assert [(a.child, a.head, a.dep, a.root) for a in arcs.arcs] == [
        (3, 4, "", False),
        (4, 4, "root", True),  # an unlabelled root is still named
    ]
    ltr = layout.layout_arcs([1, 1, 1, 1], ["a", "r", "b", "c"], 0, 4, [40, 50, 60, 70])
    rtl = layout.layout_arcs([1, 1, 1, 1], ["a", "r", "b", "c"], 0, 4, [40, 50, 60, 70], rtl=True)
    assert (rtl.width, rtl.height) == (ltr.width, ltr.height)

    def tip(arc: layout.Arc) -> float:
        return float(arc.arrow.split(" L")[-1].split(",")[0])

    for a, b in zip(ltr.arcs, rtl.arcs, strict=True):
        assert tip(b) == pytest.approx(ltr.width - tip(a))
        assert float(b.label_x) == pytest.approx(ltr.width - float(a.label_x))


# ------------------------------------------------------------------ colours ---------
def test_heatmap_scale_is_per_sentence() -> None:
    rows = [[0.1, 0.9, 0.2], [0.3, 0.4, 0.5]]
    assert colors.heatmap_peak(rows, 0, 2) == 0.9
    assert colors.heatmap_peak(rows, 2, 3) == 0.5
    assert colors.heatmap_peak([], 0, 3) == 0.0
    assert colors.heatmap_alpha(0.45, 0.9) == pytest.approx(0.5)
    assert colors.heatmap_alpha(0.3, 0.0) == 0.0
    assert colors.heatmap_color(0.45, 0.9) == "rgba(207, 34, 46, 0.500)"
    assert colors.heatmap_color(0.0, 0.0) == "rgba(207, 34, 46, 0.000)"


def test_heatmap_cells_in_the_page(nlp: Language) -> None:
    dom = parse(render(sold_doc(nlp)))
    cells = [a for a in dom.having("data-weight")]
    styles = {(c["title"] or "").split(":")[0]: c["style"] or "" for c in cells}
    assert styles["ARG0 → John"].endswith("rgba(207, 34, 46, 1.000)")  # the peak
    assert styles["ARG1 → car"].endswith("rgba(207, 34, 46, 0.857)")  # 0.6 / 0.7
    assert styles["ARG1 → John"].endswith("rgba(207, 34, 46, 0.000)")


def test_palette_labels_and_legend_order() -> None:
    assert colors.base_label("C-A0") == "ARG0"
    assert colors.base_label("r-am-tmp") == "ARGM-TMP"
    assert colors.base_label("AA") == "ARGA"
    palette = colors.Palette({"x-new": "teal"})
    assert palette("a1") == colors.DEFAULT_LABEL_COLORS["ARG1"]
    assert palette("R-ARGM-LOC") == colors.DEFAULT_LABEL_COLORS["ARGM-LOC"]
    assert palette("X-NEW") == "teal"
    hashed = palette("ODD")
    assert re.fullmatch(r"hsl\(\d{1,3}, 75%, 82%\)", hashed)
    assert hashed == colors.hashed_color("ODD") != colors.hashed_color("ODDER")
    assert colors.role_classes("c-arg0").endswith("lisa-role-c")
    assert colors.role_classes("R-ARG0").endswith("lisa-role-r")
    assert colors.role_classes("ARG0") == "lisa-cell lisa-role"
    labels = ["ARGM-TMP", "X", "C-ARG0", "ARG1", "ARG0"]
    assert sorted(labels, key=colors.label_order) == ["ARG0", "C-ARG0", "ARG1", "ARGM-TMP", "X"]


# -------------------------------------------------------------- package data --------
def test_templates_and_css_are_package_data() -> None:
    assert str(templates.css(False)).startswith(".lisa-srl {")
    assert "\n" not in templates.css(True)
    names = sorted(p.name for p in Path(templates.__file__).parent.glob("*.html"))
    assert "page.html" in names and "frame_row.html" in names and "legend.html" in names
    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).parents[1] / "setup.cfg")
    globs = cfg["options.package_data"]["spacy_lisa.render"].replace(",", " ").split()
    assert "style.css" in globs
    for name in names:
        assert any(fnmatch.fnmatch(name, g) for g in globs), name
