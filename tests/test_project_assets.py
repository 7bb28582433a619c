"""The quickstart in a fresh clone without a local copy of the data: `spacy project
assets` fetches the three git repositories (here small local ones, built from hand-written
sentences in the layout of UD_English-EWT, propbank-release and propbank-frames) and
`spacy project run` finds them under assets/ with the project's defaults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
import srsly
from project_testing import copy_project, frame_file, run_checked, tiny_vectors_encoder

NAMES = ["Mira", "Tobias", "Ines", "Karl", "Petra", "Olaf"]
# (word, lemma, roleset)
VERBS = [
    ("painted", "paint", "paint.01"),
    ("moved", "move", "move.02"),
    ("found", "find", "find.01"),
    ("cleaned", "clean", "clean.01"),
]
NOUNS = ["fence", "table", "lamp", "boat", "shed"]
GENRES = ["answers", "email", "reviews", "weblog", "newsgroup"]


def _sentence(n: int) -> List[Dict[str, str]]:
    """Sentence ``n``: "NAME VERB the NOUN [yesterday] ." as rows of both releases."""
    word, lemma, roleset = VERBS[n % len(VERBS)]
    rows = [
        dict(form=NAMES[n % len(NAMES)], lemma="_", upos="PROPN", xpos="NNP", head="2",
             dep="nsubj", role="(ARG0*)"),
        dict(form=word, lemma=lemma, upos="VERB", xpos="VBD", head="0", dep="root",
             role="(V*)", roleset=roleset),
        dict(form="the", lemma="the", upos="DET", xpos="DT", head="4", dep="det",
             role="(ARG1*"),
        dict(form=NOUNS[n % len(NOUNS)], lemma="_", upos="NOUN", xpos="NN", head="2",
             dep="obj", role="*)"),
    ]  # fmt: skip
    if n % 3 == 0:
        rows.append(
            dict(form="yesterday", lemma="yesterday", upos="NOUN", xpos="NN", head="2",
                 dep="obl:tmod", role="(ARGM-TMP*)")
        )  # fmt: skip
    rows.append(dict(form=".", lemma=".", upos="PUNCT", xpos=".", head="2", dep="punct", role="*"))
    return rows


def _write_split(ud: Path, propbank: Path, split: str, docs: List[str], n_sents: int) -> None:
    """The UD file of a split and one .gold_skel file per document."""
    conllu: List[str] = []
    n = 0
    for doc in docs:
        genre, name = doc.split("-")
        conllu.append(f"# newdoc id = {doc}")
        skel: List[str] = []
        for s in range(n_sents):
            rows = _sentence(n)
            n += 1
            conllu.append(f"# sent_id = {doc}-{s + 1:04d}")
            for i, row in enumerate(rows):
                misc = "SpaceAfter=No" if i == len(rows) - 2 else "_"
                lemma = row["lemma"] if row["lemma"] != "_" else row["form"].lower()
                conllu.append(
                    f"{i + 1}\t{row['form']}\t{lemma}\t{row['upos']}\t{row['xpos']}\t_\t"
                    f"{row['head']}\t{row['dep']}\t_\t{misc}"
                )
                roleset = row.get("roleset", "-")
                frame_lemma = lemma if roleset != "-" else "-"
                skel.append(
                    f"google/ewt/{genre}/00/{name}.xml {s} {i} [WORD] {row['xpos']} * "
                    f"{frame_lemma} {roleset} {row['role']}"
                )
            conllu.append("")
            skel.append("")
        skel_path = propbank / "data/google/ewt" / genre / "00" / f"{name}.xml.gold_skel"
        skel_path.parent.mkdir(parents=True, exist_ok=True)
        skel_path.write_text("\n".join(skel), encoding="utf8")
    (ud / f"en_ewt-ud-{split}.conllu").write_text("\n".join(conllu) + "\n", encoding="utf8")


def _git_repo(path: Path, branch: str) -> Path:
    """``path`` committed as a git repository on ``branch``."""
    # the test's own identity, unsigned: whatever the machine's git config says
    config = ["user.name=test", "user.email=test@example.org", "commit.gpgsign=false"]
    git = ["git", *(arg for c in config for arg in ("-c", c)), "-C", str(path)]
    for args in (["init", "-q", "-b", branch], ["add", "-A"], ["commit", "-q", "-m", "data"]):
        subprocess.run(git + args, check=True, capture_output=True)
    return path


def _repositories(root: Path) -> Dict[str, Path]:
    """Miniatures of the three repositories `spacy project assets` clones."""
    ud, propbank, frames = root / "ud", root / "propbank", root / "frames"
    for folder in (ud, propbank, frames / "frames"):
        folder.mkdir(parents=True)
    docs = [f"{GENRES[d % len(GENRES)]}-doc{d:02d}" for d in range(8)]
    _write_split(ud, propbank, "train", docs[:6], n_sents=8)
    _write_split(ud, propbank, "dev", docs[6:], n_sents=4)
    for lemma, rolesets in [
        ("paint", ["paint.01", "paint.02"]),
        ("move", ["move.01", "move.02"]),
        # a lemma the sentences never show: only the frame files make it a candidate
        ("zorble", ["zorble.01"]),
    ]:
        (frames / "frames" / f"{lemma}.xml").write_text(
            frame_file(lemma, rolesets), encoding="utf8"
        )
    return {
        "ud": _git_repo(ud, "r2.5"),
        "propbank": _git_repo(propbank, "master"),
        "frames": _git_repo(frames, "trunk"),
    }


@pytest.mark.slow
def test_assets_then_workflow_in_a_fresh_clone(tmp_path: Path) -> None:
    repos = _repositories(tmp_path / "repos")
    # a fresh clone: no ../shared beside it, nothing under assets/
    project = copy_project(tmp_path / "clone" / "project")
    assert not (project.parent / "shared").exists()
    spacy = [sys.executable, "-m", "spacy", "project"]
    # a plain path and file:// URLs: `git clone` takes both
    sources = [
        "--vars.ud_repo", str(repos["ud"]),
        "--vars.propbank_repo", repos["propbank"].as_uri(),
        "--vars.frames_repo", repos["frames"].as_uri(),
        "--vars.frames_branch", "trunk",
    ]  # fmt: skip
    run_checked(spacy + ["assets", ".", *sources], project)
    assert (project / "assets/ewt/ud/en_ewt-ud-train.conllu").is_file()
    assert len(list((project / "assets/ewt/propbank").rglob("*.gold_skel"))) == 8
    assert sorted(p.name for p in (project / "assets/propbank-frames/frames").iterdir()) == [
        "move.xml",
        "paint.xml",
        "zorble.xml",
    ]
    # what reads the data with the defaults of ewt_dir (convert) and frames_dir (the
    # trainings of lisa_srl; `train` is the one of train-cpu without the parser beside
    # it); the whole workflow on real data: test_project_smoke.py
    tiny = ["--vars.max_steps", "2"]
    tiny += ["--vars.heldout_share", "0.5"]
    tiny += ["--vars.vectors_encoder", str(tiny_vectors_encoder(tmp_path / "encoder"))]
    for step in ("convert", "vectors", "train"):
        run_checked(spacy + ["run", step, ".", *tiny], project)
    stats = srsly.read_json(project / "corpus/train.stats.json")
    assert stats["sentences"] == 48 and stats["predicates"] == 48
    cfg = srsly.read_json(project / "training/lisa_cpu/model-best/lisa_srl/cfg")
    assert cfg["sense_candidates"]["zorble"] == ["zorble.01"]
    assert cfg["sense_candidates"]["paint"] == ["paint.01", "paint.02"]
