"""spaCy's English tokenizer, adjusted towards the English Web Treebank's UD tokenisation.

``spacy-lisa.EWTTokenizer.v1`` (registered in ``@tokenizers``) builds the tokenizer of
``spacy.lang.en.English`` and changes it only where EWT's gold tokens disagree with it
often enough on the training documents to pay (docs/benchmarks/tokenisation.md counts the
disagreements by pattern):

- runs of terminal punctuation stay one token (``!!``, ``???``, ``.?``, ``?!``), and so do
  runs of one symbol (``<<``, ``>>``, ``***``, ``====``, ``____``, ``++``) and ``‘’``;
- a word with one of UD's hyphenated prefixes stays one token (``e-mail``,
  ``non-commercial``, ``pre-war``, ``co-workers``); other hyphens still split;
- phone numbers and extensions (``713-853-3989``, ``1-800-991-9019``, ``x3-9890``), dashed
  dates (``11-20-2000``), file names (``ld2d-#69366-1.DOC``) and short years (``'72``)
  stay one token;
- abbreviations EWT keeps with their period (``Ft.``, ``Lt.``, ``Wed.``, ...; not ``etc.``
  or ``No.``, which EWT splits before a sentence end),
  ``Yahoo!``, ``wanna`` split as ``wan na`` (as spaCy already splits ``gonna``), and the
  upper-case forms of spaCy's contractions (``DON'T``, ``CANT``);
- ``and/or`` splits at the slash (spaCy has an exception keeping it whole), and ``id``
  stays one token (spaCy reads it as ``i d``);
- ``(`` splits between letters (``account(s)``, ``SCHEDULE(draft)``), a clock time
  from ``am``/``pm`` (``7:30PM``), a number from ``k`` (``65k``), and a backtick
  possessive from its word (``mama`s``).

Every change is a tokenizer exception or a prefix/suffix/infix/token-match pattern, which
``Tokenizer.to_disk`` writes into the pipeline's ``tokenizer`` file, so a saved pipeline
keeps them when loaded, whichever tokenizer its config names.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List

from spacy.attrs import ORTH
from spacy.lang.en import English
from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc
from spacy.util import (
    compile_infix_regex,
    compile_prefix_regex,
    compile_suffix_regex,
    registry,
)
from spacy.vocab import Vocab

#: Prefixes that UD English keeps attached to the hyphenated word they start.
HYPHEN_PREFIXES = (
    "anti arch co counter cross e ex extra hyper inter intra micro mid mini multi neo non "
    "over post pre pro psycho re semi socio sub super trans ultra"
).split()

#: Affix patterns tried before spaCy's own (prefixes, suffixes).
PUNCT_RUNS = [
    r"\.?[!?][!?.]*",  # !! ??? ?! .? !. !!!?
    r"<{2,}",
    r">{2,}",
    r"\*{2,}",
    r"={2,}",
    r"_{2,}",
    r"\+{2,}",
    "‘’",
]
EXTRA_PREFIXES = PUNCT_RUNS
EXTRA_SUFFIXES = [
    # lookbehinds: "...?" and "T.V.?" keep "?" apart, as in EWT
    r"(?<![.!?])[!?][!?.]*",
    r"(?<![.!?A-Z])\.[!?][!?.]*",
    *PUNCT_RUNS[1:],
    r"(?<=[0-9]:[0-9][0-9])(?:[ap]m|[AP]M)",
    r"(?<=[0-9])k",
    r"(?<=[A-Za-z])`s",
]
EXTRA_INFIXES = [
    r"(?<=[A-Za-z0-9])\((?=[A-Za-z])",
]

#: Whole strings (after prefixes and suffixes are split off) kept as one token.
TOKEN_MATCH = "^(?:{})$".format(
    "|".join(
        [
            r"(?i:(?:{})-[^\W\d_]+)".format("|".join(HYPHEN_PREFIXES)),
            r"(?:1-)?(?:[0-9]{3}-)?[0-9]{3}-[0-9]{4}",  # phone numbers
            r"[xX][0-9]{1,2}-[0-9]{4}",  # extensions
            r"[0-9]{1,2}-[0-9]{1,2}-[0-9]{2,4}",  # dates
            r"[\w#-]*\w\.(?i:docx?|xlsx?|pptx?|pdf|txt|html?|zip|jpg|gif)",  # file names
            r"['’][0-9]{2}",  # '72
        ]
    )
)

#: Abbreviations EWT keeps with their period.
ABBREVIATIONS = (
    "Ft. Lt. Col. Sr. Attn. Reps. Spec. Mon. Tue. Tues. Wed. Thu. Thur. Thurs. Fri. Sat. Sun."
).split()
#: spaCy exceptions EWT does not follow.
REMOVED_EXCEPTIONS = ("and/or", "id", "Id")
#: spaCy's apostrophe-less contractions whose upper-case forms are added.
NT_CONTRACTIONS = re.compile(r"^[a-z]+(?:n['’]?t)$")


def ewt_tokenizer_exceptions() -> Dict[str, List[Dict[int, str]]]:
    """spaCy's English exceptions, edited as described in the module docstring."""
    rules: Dict[str, List[Dict[int, str]]] = {
        key: [dict(piece) for piece in pieces]
        for key, pieces in English.Defaults.tokenizer_exceptions.items()
        if key not in REMOVED_EXCEPTIONS
    }
    for key, pieces in list(rules.items()):
        if (
            key.islower()
            and key.upper() not in rules
            and ("'" in key or "’" in key or NT_CONTRACTIONS.match(key))
        ):
            rules[key.upper()] = [{ORTH: piece[ORTH].upper()} for piece in pieces]
    for abbreviation in ABBREVIATIONS:
        rules[abbreviation] = [{ORTH: abbreviation}]
    for wanna in ("wanna", "Wanna", "WANNA"):
        rules[wanna] = [{ORTH: wanna[:3]}, {ORTH: wanna[3:]}]
    rules["Yahoo!"] = [{ORTH: "Yahoo!"}]
    return rules


def build_ewt_tokenizer(vocab: Vocab) -> Tokenizer:
    """The tokenizer of ``spacy.lang.en.English`` with the EWT rules added."""
    defaults = English.Defaults
    prefixes = [*EXTRA_PREFIXES, *(defaults.prefixes or [])]
    suffixes = [*EXTRA_SUFFIXES, *(defaults.suffixes or [])]
    infixes = [*EXTRA_INFIXES, *(defaults.infixes or [])]
    url_match = defaults.url_match
    return Tokenizer(
        vocab,
        rules=ewt_tokenizer_exceptions(),
        prefix_search=compile_prefix_regex(prefixes).search,
        suffix_search=compile_suffix_regex(suffixes).search,
        infix_finditer=compile_infix_regex(infixes).finditer,
        token_match=re.compile(TOKEN_MATCH).match,
        url_match=url_match,
    )


@registry.tokenizers("spacy-lisa.EWTTokenizer.v1")
def create_ewt_tokenizer() -> Callable[[Language], Tokenizer]:
    """Registered ``[nlp.tokenizer]``: ``@tokenizers = "spacy-lisa.EWTTokenizer.v1"``."""

    def ewt_tokenizer_factory(nlp: Language) -> Tokenizer:
        return build_ewt_tokenizer(nlp.vocab)

    return ewt_tokenizer_factory


#: Words after which a one-token "its" stands for "it's" (EWT writes it as two tokens,
#: "it" + "s", and annotates "s" as the verb): determiners, negation, adverbs,
#: prepositions and verb forms that a possessive "its" (followed by a noun or adjective)
#: does not precede. On EWT train this splits 39 of the 56 such "its" and 1 of the 164
#: possessives; adjectives are left alone ("its great" vs "its great food").
ITS_CONTRACTION_NEXT = frozenset(
    """a an the this that these those my your his her our their no all every some any
    nothing something anything everything anyone someone everyone not never so too to
    really very just also still only now simply definitely always pretty quite actually
    probably prolly already almost kinda sorta totally absolutely obviously certainly less
    more even like such worth ok okay in on at for from with by about between over under
    as because been being going gonna getting got called done""".split()
)


@Language.component("lisa_split_its")
def split_its(doc: Doc) -> Doc:
    """Split ``its`` into ``it`` + ``s`` where the next word shows it means "it's"
    (:data:`ITS_CONTRACTION_NEXT`), as EWT tokenises it: the tokenizer cannot (it sees
    one whitespace-separated chunk at a time). Runs first, before the tagger and parser:
    the assembled pipelines (``scripts/assemble_pipeline.py``) put it there."""
    targets = [
        token
        for token in doc[:-1]
        if token.lower_ == "its" and doc[token.i + 1].lower_ in ITS_CONTRACTION_NEXT
    ]
    if targets:
        with doc.retokenize() as retokenizer:
            for token in targets:
                # "it" attached to "s"; the parser after this component sets real heads
                retokenizer.split(
                    token, [token.text[:2], token.text[2:]], heads=[(token, 1), (token, 1)]
                )
    return doc
