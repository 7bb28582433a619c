"""Round trip without loss: bracket columns -> records -> DocBin -> CoNLL-2005 props ->
records gives the same predicates and spans, nested spans and discontinuous ``C-``
arguments included."""

import tempfile
from pathlib import Path
from typing import List, Tuple

from hypothesis import example, given, settings
from hypothesis import strategies as st

from spacy_lisa.corpus import CorpusStats, SentenceRecord
from spacy_lisa.corpus.conll2005 import read_conll2005, write_conll2005
from spacy_lisa.corpus.conll2012 import read_conll2012
from spacy_lisa.corpus.docbin import convert_to_docbin, read_docbin

Span = Tuple[int, int, str]
# (start, end, lemma, roleset, arguments)
Frame = Tuple[int, int, str, str, List[Span]]
Sentence = Tuple[List[str], List[Frame]]

LABELS = ["ARG0", "ARG1", "ARG2", "ARGM-TMP", "ARGM-MOD", "R-ARG0", "C-ARG1", "C-ARG0", "C-V"]


@st.composite
def nested_spans(draw, lo: int, hi: int, depth: int = 0) -> List[Span]:
    """Spans over [lo, hi) that nest or are disjoint (never cross), as one column can
    hold them; a span may repeat its parent's extent."""
    spans: List[Span] = []
    i = lo
    while i < hi:
        if draw(st.booleans()):
            end = draw(st.integers(i + 1, min(hi, i + 4)))
            spans.append((i, end, draw(st.sampled_from(LABELS))))
            if depth < 2 and draw(st.booleans()):
                spans.extend(draw(nested_spans(i, end, depth + 1)))
            i = end
        else:
            i += 1
    return spans


def _crosses(a: Tuple[int, int], spans: List[Span]) -> bool:
    return any(s < a[0] < e < a[1] or a[0] < s < a[1] < e for s, e, _ in spans)


@st.composite
def sentences(draw) -> Sentence:
    n = draw(st.integers(1, 8))
    words = draw(st.lists(st.text("abcXY-.,'", min_size=1, max_size=4), min_size=n, max_size=n))
    rows = sorted(draw(st.sets(st.integers(0, n - 1), max_size=3)))
    frames: List[Frame] = []
    for row in rows:
        arguments = draw(nested_spans(0, n))
        end = row + draw(st.integers(1, 2))  # phrasal verbs have two-word V spans
        if end > n or _crosses((row, end), arguments):
            end = row + 1
        lemma = draw(st.sampled_from(["go", "take_up", "be"]))
        frames.append((row, end, lemma, f"{lemma}.0{draw(st.integers(1, 3))}", arguments))
    return words, frames


def _column(n: int, spans: List[Span]) -> List[str]:
    """The test's own bracket writer (not the package's): outer spans open first."""
    cells = [""] * n
    closes = [0] * n
    for start, end, label in sorted(spans, key=lambda s: (s[0], -s[1])):
        cells[start] += f"({label}"
        closes[end - 1] += 1
    return [cells[i] + "*" + ")" * closes[i] for i in range(n)]


def _gold_conll(sents: List[Sentence]) -> str:
    lines = []
    for s, (words, frames) in enumerate(sents):
        n = len(words)
        columns = [_column(n, [(st_, en, "V"), *args]) for st_, en, _, _, args in frames]
        by_row = {f[0]: f for f in frames}
        for i, word in enumerate(words):
            lemma, roleset = (by_row[i][2], by_row[i][3]) if i in by_row else ("-", "-")
            props = " ".join(column[i] for column in columns)
            lines.append(f"doc/x.xml {s} {i} {word} XX * {lemma} {roleset} {props}".rstrip())
        lines.append("")
    return "\n".join(lines)


def _expected(sents: List[Sentence]) -> List[list]:
    return [
        sorted(((s, e), lemma, sorted(args)) for s, e, lemma, _, args in frames)
        for _, frames in sents
    ]


def _frames(records: List[SentenceRecord]) -> List[list]:
    return [
        sorted((p.span, p.lemma, sorted(a.as_tuple() for a in p.arguments)) for p in r.predicates)
        for r in records
        if r.predicates is not None
    ]


NESTED_AND_DISCONTINUOUS: List[Sentence] = [
    (
        ["top", "it", "off", ",", "which", "says", "so"],
        [
            (0, 1, "top", "top.01", [(1, 2, "ARG1"), (2, 3, "C-V"), (5, 7, "C-ARG1")]),
            (5, 6, "say", "say.01", [(4, 5, "R-ARG0"), (0, 4, "ARG0"), (0, 3, "ARG1")]),
        ],
    ),
    (["Hi"], []),
]


@settings(max_examples=30, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=3), st.integers(1, 2))
@example(NESTED_AND_DISCONTINUOUS, 1)
@example(NESTED_AND_DISCONTINUOUS, 2)
def test_bracket_columns_docbin_props_round_trip(sents: List[Sentence], n_sents: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        source = tmp_path / "x.gold_conll"
        source.write_text(_gold_conll(sents), encoding="utf-8")
        records = list(read_conll2012(source))
        assert _frames(records) == _expected(sents)

        convert_to_docbin(records, tmp_path / "x.spacy", stats=CorpusStats(), n_sents=n_sents)
        docs = read_docbin(tmp_path / "x.spacy")
        rolesets = [f.roleset for doc in docs for f in doc._.srl_frames]
        assert sorted(rolesets) == sorted(f[3] for _, frames in sents for f in frames)

        write_conll2005(docs, tmp_path / "words.txt", tmp_path / "props.txt")
        back = list(read_conll2005(tmp_path / "words.txt", tmp_path / "props.txt"))
        assert [r.words for r in back] == [words for words, _ in sents]
        assert _frames(back) == _expected(sents)
