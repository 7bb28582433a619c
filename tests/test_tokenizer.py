"""spacy-lisa.EWTTokenizer.v1: each rule splits as EWT does, other text as spaCy does, and
the rules survive nlp.to_disk / spacy.load."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest
import spacy
from spacy.language import Language
from spacy.tokenizer import Tokenizer

from spacy_lisa.tokenizer import build_ewt_tokenizer, create_ewt_tokenizer

EWT_CONFIG = {"nlp": {"tokenizer": {"@tokenizers": "spacy-lisa.EWTTokenizer.v1"}}}

# (text, EWT's tokens); spaCy's default English tokenizer splits each differently.
RULE_CASES = [
    ("Wow!!", ["Wow", "!!"]),
    ("HORRIBLE!!!", ["HORRIBLE", "!!!"]),
    ("Really?!?", ["Really", "?!?"]),
    ("no injuries.?", ["no", "injuries", ".?"]),
    ("!!! yes", ["!!!", "yes"]),
    (">> quoted <<", [">>", "quoted", "<<"]),
    ("**NOTE**", ["**", "NOTE", "**"]),
    ("=====", ["====="]),
    ("name ______", ["name", "______"]),
    ("say ‘’ here", ["say", "‘’", "here"]),
    ("Send an e-mail.", ["Send", "an", "e-mail", "."]),
    ("non-commercial co-workers", ["non-commercial", "co-workers"]),
    ("(pre-war)", ["(", "pre-war", ")"]),
    (
        "Call 713-853-3989, or 1-800-991-9019.",
        ["Call", "713-853-3989", ",", "or", "1-800-991-9019", "."],
    ),
    ("ext. x3-9890", ["ext", ".", "x3-9890"]),
    ("on 11-20-2000", ["on", "11-20-2000"]),
    ("see ld2d-#69366-1.DOC", ["see", "ld2d-#69366-1.DOC"]),
    ("in '72", ["in", "'72"]),
    ("in Ft. Worth", ["in", "Ft.", "Worth"]),
    ("on Wed. at noon", ["on", "Wed.", "at", "noon"]),
    ("I wanna go", ["I", "wan", "na", "go"]),
    ("I DON'T know", ["I", "DO", "N'T", "know"]),
    ("I CANT go", ["I", "CA", "NT", "go"]),
    ("Yahoo! Answers", ["Yahoo!", "Answers"]),
    ("cash and/or stock", ["cash", "and", "/", "or", "stock"]),
    ("the post id is", ["the", "post", "id", "is"]),
    ("the account(s) listed", ["the", "account", "(", "s", ")", "listed"]),
    ("at 7:30PM today", ["at", "7:30", "PM", "today"]),
    ("at 6:00pm", ["at", "6:00", "pm"]),
    ("earns 65k a year", ["earns", "65", "k", "a", "year"]),
    ("my mama`s house", ["my", "mama", "`s", "house"]),
]

# Text the EWT tokenizer must leave exactly as spaCy's default does (including hyphens
# EWT splits, sentence-final "etc." and "No.", ampersands, ellipses, URLs).
ORDINARY = [
    "The well-known so-called self-rule plan, a long-term follow-up.",
    "I don't know; it's 5 p.m. now... isn't it?",
    "Pigs, cows, etc. We said No. Then U.S. and T.V.? Hello...? Fine!",
    "AT&T and PG&E's P&L rose 3-4% to $5.00 (about 10km) in 1990-1995.",
    "Mail me at john.smith@example.com or see http://www.example.com/a-b?x=1.",
    "He gonna do it :) ;-) 'cause we can't.",
    "Jamaat-e-Islami met in al-Anbar on 5/14 at 9am.",
]


def ewt_tokens(text: str) -> List[str]:
    return [t.text for t in build_ewt_tokenizer(spacy.blank("en").vocab)(text)]


def default_tokens(text: str) -> List[str]:
    return [t.text for t in spacy.blank("en").tokenizer(text)]


@pytest.mark.parametrize("text,expected", RULE_CASES)
def test_rule_splits_as_ewt(text: str, expected: List[str]) -> None:
    assert ewt_tokens(text) == expected
    # the rule is what makes the difference
    assert default_tokens(text) != expected


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_unchanged(text: str) -> None:
    assert ewt_tokens(text) == default_tokens(text)


def test_registered_tokenizer() -> None:
    nlp = spacy.blank("en", config=EWT_CONFIG)
    assert nlp.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy-lisa.EWTTokenizer.v1"
    assert [t.text for t in nlp("an e-mail!!")] == ["an", "e-mail", "!!"]
    assert spacy.registry.tokenizers.get("spacy-lisa.EWTTokenizer.v1") is create_ewt_tokenizer


PROBE = "Re: e-mail!! 713-853-3989 and/or account(s) at 7:30PM, I wanna in Ft. Worth"
PROBE_TOKENS = (
    "Re : e-mail !! 713-853-3989 and / or account ( s ) at 7:30 PM , I wan na in Ft. Worth"
).split()


def check_probe(nlp: Language) -> None:
    assert [t.text for t in nlp(PROBE)] == PROBE_TOKENS


def test_probe_needs_the_rules() -> None:
    assert default_tokens(PROBE) != PROBE_TOKENS
    check_probe(spacy.blank("en", config=EWT_CONFIG))


def test_round_trip_with_registered_tokenizer(tmp_path: Path) -> None:
    nlp = spacy.blank("en", config=EWT_CONFIG)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy-lisa.EWTTokenizer.v1"
    check_probe(loaded)


def test_rules_saved_in_tokenizer_files(tmp_path: Path) -> None:
    # The config names spaCy's default tokenizer; the saved tokenizer files carry the rules.
    nlp = spacy.blank("en")
    nlp.tokenizer = build_ewt_tokenizer(nlp.vocab)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy.Tokenizer.v1"
    check_probe(loaded)
    # and overriding the config's tokenizer at load time does not drop them either
    nlp = spacy.blank("en", config=EWT_CONFIG)
    nlp.to_disk(tmp_path / "ewt")
    override = {"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}}
    check_probe(spacy.load(tmp_path / "ewt", config=override))


def test_to_bytes_round_trip() -> None:
    nlp = spacy.blank("en")
    tokenizer = nlp.tokenizer
    assert isinstance(tokenizer, Tokenizer)
    tokenizer.from_bytes(build_ewt_tokenizer(nlp.vocab).to_bytes())
    check_probe(nlp)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Its a great place.", ["It", "s", "a", "great", "place", "."]),
        ("I think its not bad", ["I", "think", "it", "s", "not", "bad"]),
        ("ITS really good", ["IT", "S", "really", "good"]),
        # possessive "its" (a noun or an adjective next) and a final "its" stay whole
        ("The shop and its owner", ["The", "shop", "and", "its", "owner"]),
        ("its great food", ["its", "great", "food"]),
        ("I like its", ["I", "like", "its"]),
    ],
)
def test_split_its_as_ewt(text: str, expected: List[str]) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_split_its")
    doc = nlp(text)
    assert [t.text for t in doc] == expected
    assert doc.text == text  # the split adds no space


def test_split_its_before_a_parser_survives_the_save(tmp_path: Path) -> None:
    """In front of a parser (as the assembled pipelines put it), the parser parses the
    split tokens, and a saved pipeline keeps the component."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lisa_split_its")
    parser = nlp.add_pipe("parser")
    parser.add_label("nsubj")  # type: ignore[attr-defined]
    nlp.initialize()
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["lisa_split_its", "parser"]
    doc = loaded("Its a nice day")
    assert [t.text for t in doc] == ["It", "s", "a", "nice", "day"]
    assert doc.has_annotation("DEP")
