"""How often a tokenizer run on the raw EWT text disagrees with EWT's gold (UD) tokens.

    python benchmarks/bench_tokenization.py [--splits dev train] [--examples 4]
        [--show-changes 15]

For every document of ``corpus/<split>.docs.spacy`` (one Doc per EWT document, gold
tokens, ``doc.text`` the raw text), the text is tokenized by spaCy's default English
tokenizer (``spacy.blank("en").tokenizer``) and by ``spacy-lisa.EWTTokenizer.v1``. A gold
token is a mismatch when its character span is not exactly one predicted token. Mismatches
are grouped by the pattern of the gold token and the whitespace-delimited chunk of text it
sits in (hyphens, punctuation runs, slashes, ...), with the most frequent examples
(``chunk -> gold tokens``). Also printed: gold tokens the EWT tokenizer matches that the
default does not (fixed) and the reverse (broken).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Dict, List, Set, Tuple

import spacy
from machine import describe
from spacy.tokens import Doc, DocBin

from spacy_lisa.tokenizer import build_ewt_tokenizer

REPO = Path(__file__).resolve().parents[1]

Span = Tuple[int, int]

CONTRACTIONS = {
    "cant",
    "dont",
    "wont",
    "arnt",
    "isnt",
    "didnt",
    "doesnt",
    "wanna",
    "gonna",
    "gotta",
    "id",
    "lets",
    "im",
    "ive",
    "youre",
    "thats",
}

PATTERNS: List[Tuple[str, Callable[[str, str], bool]]] = [
    ("URLs / e-mail addresses", lambda g, c: bool(re.search(r"https?:|www\.|@\w", c))),
    (
        "file names (x.doc)",
        lambda g, c: bool(re.search(r"\w\.(?:docx?|xlsx?|pdf|pptx?|txt|html?)\b", c, re.I)),
    ),
    ("times (7:30pm)", lambda g, c: bool(re.search(r"\d(?::\d\d)?[ap]\.?m\b", c, re.I))),
    (
        "phone numbers / dashed dates",
        lambda g, c: bool(re.search(r"\d{3}-\d{4}|\b\d{1,2}-\d{1,2}-\d{2,4}\b", c)),
    ),
    ("hyphens (e-mail, non-X)", lambda g, c: "-" in c),
    ("slashes (and/or, 1/2)", lambda g, c: "/" in c),
    ("brackets inside words ((s))", lambda g, c: bool(re.search(r"\w[()\[]", c))),
    ("ampersands (B&W)", lambda g, c: "&" in c),
    (
        "apostrophes ('s, n't, '72, `s)",
        lambda g, c: bool(re.search(r"['’`]", c)),
    ),
    (
        "contractions without apostrophe (CANT, wanna, id, lets)",
        lambda g, c: re.sub(r"\W", "", c).lower() in CONTRACTIONS,
    ),
    ("numbers with units / currency (65k, $5)", lambda g, c: bool(re.search(r"\d", c))),
    ("abbreviations with period (etc., Ft., p.m)", lambda g, c: "." in c),
    ("words EWT splits (its -> it s, everyday)", lambda g, c: c.isalpha()),
]


def pattern_of(gold: str, chunk: str) -> str:
    """The pattern group of a mismatched gold token."""
    if re.fullmatch(r"[^\w\s]{2,}", gold) or re.fullmatch(r"_{2,}", gold):
        if re.fullmatch(r"[:;=8][-o']?[()\[\]DPp/|]|[()][-']?[:;=]", gold):
            return "emoticons (:) ;-))"
        return "punctuation runs (!!, <<, ***, .?)"
    for name, test in PATTERNS:
        if test(gold, chunk):
            return name
    return "other"


def chunk_of(doc: Doc, start: int, end: int) -> str:
    text = doc.text
    left = start
    while left > 0 and not text[left - 1].isspace():
        left -= 1
    right = end
    while right < len(text) and not text[right].isspace():
        right += 1
    return text[left:right]


def token_spans(doc: Doc) -> Set[Span]:
    return {(t.idx, t.idx + len(t)) for t in doc}


def measure(
    docs: List[Doc], tokenizers: Dict[str, Callable[[str], Doc]]
) -> Tuple[int, Dict[str, Dict[Span, Tuple[str, str]]], List[Dict[Span, Tuple[str, str]]]]:
    """Gold token count, and per tokenizer the mismatched gold tokens (per doc)."""
    n_gold = 0
    mismatches: Dict[str, Dict[Span, Tuple[str, str]]] = {name: {} for name in tokenizers}
    per_doc: List[Dict[Span, Tuple[str, str]]] = []
    for doc_i, doc in enumerate(docs):
        n_gold += len(doc)
        predicted = {name: token_spans(tok(doc.text)) for name, tok in tokenizers.items()}
        gold_info: Dict[Span, Tuple[str, str]] = {}
        for token in doc:
            span = (token.idx, token.idx + len(token))
            info = (token.text, chunk_of(doc, *span))
            gold_info[span] = info
            for name, spans in predicted.items():
                if span not in spans:
                    mismatches[name][(doc_i, *span)] = info  # type: ignore[index]
        per_doc.append(gold_info)
    return n_gold, mismatches, per_doc


def report(split: str, docs: List[Doc], tokenizers: Dict[str, Callable[[str], Doc]], args) -> None:
    n_gold, mismatches, _ = measure(docs, tokenizers)
    names = list(tokenizers)
    print(f"\n== {split}: {len(docs)} documents, {n_gold} gold tokens ==")
    by_pattern: Dict[str, Counter] = {name: Counter() for name in names}
    examples: Dict[str, Dict[str, Counter]] = {name: defaultdict(Counter) for name in names}
    for name in names:
        for gold, chunk in mismatches[name].values():
            group = pattern_of(gold, chunk)
            by_pattern[name][group] += 1
            examples[name][group][chunk] += 1
    groups = sorted(
        set().union(*(c.keys() for c in by_pattern.values())),
        key=lambda g: -by_pattern[names[0]][g],
    )
    header = f"{'pattern':58s}" + "".join(f"{name:>14s}" for name in names)
    print(header)
    for group in groups:
        row = f"{group:58s}" + "".join(f"{by_pattern[n][group]:14d}" for n in names)
        print(row)
    print(
        f"{'total mismatched gold tokens':58s}"
        + "".join(f"{len(mismatches[n]):14d}" for n in names)
    )
    print(
        f"{'  % of gold tokens':58s}"
        + "".join(f"{100 * len(mismatches[n]) / n_gold:13.2f}%" for n in names)
    )
    if args.examples:
        for name in names:
            print(f"\n-- examples left by {name} (chunk x mismatched gold tokens) --")
            for group in groups:
                if not examples[name][group]:
                    continue
                shown = ", ".join(
                    f"{chunk[:30]!r} x{count}"
                    for chunk, count in examples[name][group].most_common(args.examples)
                )
                print(f"  {group}: {shown}")
    if len(names) == 2:
        before, after = (set(mismatches[n]) for n in names)
        fixed = before - after
        broken = after - before
        print(
            f"\n{names[1]} vs {names[0]}: {len(fixed)} gold tokens now matched, "
            f"{len(broken)} now broken"
        )
        for label, keys, source in (
            ("fixed", fixed, mismatches[names[0]]),
            ("broken", broken, mismatches[names[1]]),
        ):
            counts = Counter(f"{source[k][0]!r} in {source[k][1][:30]!r}" for k in keys)
            if counts and args.show_changes:
                shown = ", ".join(f"{k} x{v}" for k, v in counts.most_common(args.show_changes))
                print(f"  {label}: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["dev", "train"])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--examples", type=int, default=4)
    parser.add_argument("--show-changes", type=int, default=15)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    tokenizers: Dict[str, Callable[[str], Doc]] = {
        "spaCy en": spacy.blank("en").tokenizer,
        "EWTTokenizer": build_ewt_tokenizer(spacy.blank("en").vocab),
    }
    for split in args.splits:
        path = args.corpus / f"{split}.docs.spacy"
        docs = list(DocBin().from_disk(path).get_docs(nlp.vocab))
        report(split, docs, tokenizers, args)
    print(describe())


if __name__ == "__main__":
    main()
