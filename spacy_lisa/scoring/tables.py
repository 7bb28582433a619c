"""The score tables ``spacy-lisa evaluate`` prints (percentages with two decimals):
on gold tokens (:func:`print_scores`) and on raw text (:func:`print_raw_scores`), each
followed by the per-role counts."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from wasabi import Printer

from .counts import PREDICATE_POS


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _srl_rows(scores: Dict[str, Any]) -> List[Tuple[str, str]]:
    """The rows both tables start with: SRL and predicate P/R/F, sense accuracy."""
    keys = ("srl_p", "srl_r", "srl_f", "srl_pred_p", "srl_pred_r", "srl_pred_f")
    names = ("SRL P", "SRL R", "SRL F", "PRED P", "PRED R", "PRED F")
    rows = [(name, _pct(scores[key])) for name, key in zip(names, keys, strict=True)]
    return [*rows, ("SENSE ACC", _pct(scores["srl_sense_acc"]))]


def print_scores(msg: Printer, scores: Dict[str, Any]) -> None:
    """The tables of an evaluation on gold tokens: SRL, senses, parse, POS, speed; the
    predicates by UPOS; the roles."""
    speed = scores.get("speed")
    rows: List[Tuple[str, str]] = [
        *_srl_rows(scores),
        *(
            [("SENSE ACC (lemma MFS)", _pct(scores["srl_sense_acc_mfs"]))]
            if "srl_sense_acc_mfs" in scores
            else []
        ),
        ("UAS", _pct(scores["srl_uas"])),
        ("LAS", _pct(scores["srl_las"])),
        ("POS ACC", _pct(scores["srl_pos_acc"])),
        ("WORDS/S", "-" if speed is None else f"{speed:.0f}"),
    ]
    msg.table(rows, title=f"Results (parse: {scores['parse']}, convention: {scores['convention']})")
    per_pos = scores.get("srl_pred_per_pos") or {}
    if per_pos:
        msg.table(
            [
                (pos, _pct(per_pos[pos]["p"]), _pct(per_pos[pos]["r"]), _pct(per_pos[pos]["f"]))
                for pos in PREDICATE_POS
                if pos in per_pos
            ],
            header=("Predicate UPOS", "P", "R", "F"),
            aligns=("l", "r", "r", "r"),
            title="Predicates by the gold UPOS of their first token",
        )
    _print_per_role(msg, scores)


def print_raw_scores(msg: Printer, scores: Dict[str, Any]) -> None:
    """The tables of an evaluation on raw text: SRL, senses, what tokenisation and
    segmentation lost, speed; the roles."""
    speed = scores.get("speed")
    args, preds = scores["n_gold_args"], scores["n_gold_frames"]
    rows: List[Tuple[str, str]] = [
        *_srl_rows(scores),
        ("GOLD ARGS UNREACHABLE", f"{scores['n_gold_args_unreachable']} / {args}"),
        ("GOLD PREDS UNREACHABLE", f"{scores['n_gold_preds_unreachable']} / {preds}"),
        ("SENTENCES (GOLD / PRED)", f"{scores['n_sentences']} / {scores['n_pred_sentences']}"),
        ("WORDS/S", "-" if speed is None else f"{speed:.0f}"),
    ]
    msg.table(
        rows,
        title=f"Results on raw text (parse: {scores['parse']}, convention: {scores['convention']})",
    )
    _print_per_role(msg, scores)


def _print_per_role(msg: Printer, scores: Dict[str, Any]) -> None:
    counts = scores["srl_per_type_counts"]
    per_type = scores["srl_per_type"] or {}
    if counts:
        table = [
            (
                label,
                c["correct"],
                c["excess"],
                c["missed"],
                _pct(per_type.get(label, {}).get("p")),
                _pct(per_type.get(label, {}).get("r")),
                _pct(per_type.get(label, {}).get("f")),
            )
            for label, c in counts.items()
        ]
        msg.table(
            table,
            header=("Role", "Correct", "Excess", "Missed", "P", "R", "F"),
            aligns=("l", "r", "r", "r", "r", "r", "r"),
            title="SRL per role (CoNLL-2005: C- joined to its role, V not scored)",
        )
