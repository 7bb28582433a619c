"""The EWT join on the real data: the counts of the data's README.

The README's reference numbers were computed "aligned one for one and converted to
BIO". Every argument span counts once (``C-``/``R-`` spans on their own, the ``V`` span
not at all); none of them overlaps the predicate or another argument of its predicate,
so counting only BIO-taggable spans gives the same numbers (``arguments_not_bio`` is 0).
One train sentence does not align one for one (PropBank splits "basic-ally" at a soft
hyphen: 36 tokens against 35 UD words) and is skipped: 12,542 of 12,543 sentences.
Missing data skips locally and fails in CI (the ``ewt_dir`` fixture).
"""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_lisa.cli import app
from spacy_lisa.corpus import CorpusStats
from spacy_lisa.corpus.docbin import read_docbin
from spacy_lisa.corpus.ewt import join_ewt
from spacy_lisa.frames import has_srl_annotation


@pytest.mark.slow
def test_ewt_train_counts(ewt_dir: Path) -> None:
    stats = CorpusStats()
    for record in join_ewt(
        ewt_dir / "ud/en_ewt-ud-train.conllu", ewt_dir / "propbank", stats=stats
    ):
        stats.add_sentence(record)
    assert abs(stats.sentences - 12542) <= 1
    assert stats.sentences_with_srl == stats.sentences
    assert abs(stats.predicates - 40482) <= 4
    assert abs(stats.arguments - 81537) <= 10
    assert stats.arguments_not_bio == 0
    # the README's "59 role labels (108 BIO tags)" count V among the labels
    assert len(stats.role_label_counts) + 1 == 59
    assert len(stats.bio_tags) == 108
    assert stats.skipped_by_reason == {"token_count_mismatch": 1}
    (item,) = stats.skipped_items
    assert "answers-20111107175720AAlb2TB_ans-0015" in item["detail"]
    assert stats.documents == 540


@pytest.mark.slow
def test_ewt_dev_convert_cli(ewt_dir: Path, tmp_path: Path) -> None:
    output = tmp_path / "dev.spacy"
    result = CliRunner().invoke(
        app,
        [
            "convert", "ewt",
            "--ud", str(ewt_dir / "ud/en_ewt-ud-dev.conllu"),
            "--propbank", str(ewt_dir / "propbank"),
            "--output", str(output),
            "--stats-json", str(tmp_path / "dev.json"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    import srsly

    stats = srsly.read_json(tmp_path / "dev.json")
    assert stats["sentences"] == 2002
    assert stats["sentences_with_srl"] == 1974
    assert stats["predicates"] == 4977
    assert abs(stats["arguments"] - 9600) <= 50
    assert stats["skipped"] == 0
    # 21 dev documents have no PropBank file: their 28 sentences carry no SRL
    assert stats["notes"]["ud_documents_without_propbank"] == 21
    docs = read_docbin(output)
    assert len(docs) == 2002
    assert sum(has_srl_annotation(doc) for doc in docs) == 1974
    assert sum(len(doc._.srl_frames) for doc in docs) == 4977
