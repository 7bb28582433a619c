"""Time role decoding for a batch of frames: LAN vs bilinear scores + BIO Viterbi.

Both paths start from the same encoder states [B, T, d] and frames, and end with one BIO
label index sequence per frame (real tokens only):

- LAN: ``LabelAttentionRoleDecoder`` forward, then argmax of the last layer's attention
  (LAN's own decoding, O(|L|·n) per frame);
- bilinear: ``BilinearRoleScorer`` forward (eq. 6), log-softmax, then
  ``viterbi_paths`` with hard BIO constraints, all frames at once as the
  component runs it (O(|L|²·n) per frame).

Scoring and decoding are timed separately and together: median of ``--repeats`` runs
after ``--warmup`` runs, the six measurements interleaved round-robin, under
``torch.inference_mode`` with ``--threads`` torch threads. Weights are random: the
decoders' cost does not depend on what the weights are. The default label set is the
CoNLL-2005 role inventory in BIO (``--roles N`` uses N synthetic roles).

    python benchmarks/bench_lan_decoding.py --windows 16 --tokens 32 --frames-per-window 3
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import List, Sequence, Tuple

import numpy as np
import torch
from machine import describe, machine, round_robin

from spacy_lisa.models.lan_torch import LabelAttentionRoleDecoder
from spacy_lisa.models.role_scorer import BilinearRoleScorer
from spacy_lisa.pipeline.viterbi import viterbi_paths

# CoNLL-2005 argument labels (core, adjunct, continuation, reference) plus the verb
CONLL05_ROLES = (
    "A0 A1 A2 A3 A4 A5 AA AM-ADV AM-CAU AM-DIR AM-DIS AM-EXT AM-LOC AM-MNR AM-MOD AM-NEG "
    "AM-PNC AM-PRD AM-REC AM-TM AM-TMP C-A0 C-A1 C-A2 C-A3 C-A4 C-AM-ADV C-AM-CAU C-AM-DIR "
    "C-AM-DIS C-AM-EXT C-AM-LOC C-AM-MNR C-AM-NEG C-AM-PNC C-AM-TMP C-V R-A0 R-A1 R-A2 R-A3 "
    "R-A4 R-AA R-AM-ADV R-AM-CAU R-AM-EXT R-AM-LOC R-AM-MNR R-AM-PNC R-AM-TMP V"
).split()


def bio_labels(roles: Sequence[str]) -> List[str]:
    return ["O"] + [f"{prefix}-{role}" for role in roles for prefix in ("B", "I")]


def make_batch(
    n_windows: int, n_tokens: int, frames_per_window: int, width: int, seed: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random states [B, T, d], mask [B, T] (lengths between T/2 and T), frames [F]."""
    generator = torch.Generator().manual_seed(seed)
    states = torch.randn(n_windows, n_tokens, width, generator=generator)
    lengths = torch.randint(max(1, n_tokens // 2), n_tokens + 1, (n_windows,), generator=generator)
    mask = torch.arange(n_tokens)[None, :] < lengths[:, None]
    windows: List[int] = []
    positions: List[int] = []
    for w in range(n_windows):
        picks = torch.randperm(int(lengths[w]), generator=generator)[:frames_per_window]
        windows.extend([w] * len(picks))
        positions.extend(int(p) for p in picks.sort().values)
    return states, mask, torch.tensor(windows), torch.tensor(positions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=16, help="windows (sentences) B")
    parser.add_argument("--tokens", type=int, default=32, help="padded window length T")
    parser.add_argument("--frames-per-window", type=int, default=3)
    parser.add_argument("--width", type=int, default=128, help="encoder width d")
    parser.add_argument("--roles", type=int, default=0, help="synthetic roles (0: CoNLL-05)")
    parser.add_argument("--lan-layers", type=int, default=2)
    parser.add_argument("--lan-heads", type=int, default=1)
    parser.add_argument("--lan-hidden", type=int, default=200)
    parser.add_argument("--role-width", type=int, default=128, help="bilinear MLP width")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON line only")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    roles = [f"R{i}" for i in range(args.roles)] if args.roles else CONLL05_ROLES
    labels = bio_labels(roles)
    n_labels = len(labels)
    states, mask, frame_window, frame_pos = make_batch(
        args.windows, args.tokens, args.frames_per_window, args.width, args.seed
    )
    lengths = mask[frame_window].sum(-1).tolist()  # real tokens per frame
    lan = LabelAttentionRoleDecoder(
        args.width, n_labels, args.lan_layers, args.lan_heads, args.lan_hidden, dropout=0.0
    ).eval()
    bilinear = BilinearRoleScorer(args.width, n_labels, args.role_width).eval()

    def lan_scores() -> torch.Tensor:
        with torch.inference_mode():
            return lan(states, mask, frame_window, frame_pos)  # [F, T, L]

    def lan_decode(logits: torch.Tensor) -> List[List[int]]:
        best = logits.argmax(-1).numpy()  # [F, T]
        return [best[f, :n].tolist() for f, n in enumerate(lengths)]

    def bilinear_scores() -> torch.Tensor:
        with torch.inference_mode():
            logits = bilinear(states, mask, frame_window, frame_pos)  # [F, T, L]
            return torch.log_softmax(logits, dim=-1)

    def viterbi(log_probs: torch.Tensor) -> List[List[int]]:
        array = log_probs.numpy()
        return viterbi_paths(array, lengths, labels)  # as the component decodes

    lan_logits, bilinear_logp = lan_scores(), bilinear_scores()
    times, _ = round_robin(
        {
            "lan_score_s": lan_scores,
            "lan_decode_s": lambda: lan_decode(lan_logits),
            "lan_total_s": lambda: lan_decode(lan_scores()),
            "bilinear_score_s": bilinear_scores,
            "viterbi_decode_s": lambda: viterbi(bilinear_logp),
            "bilinear_viterbi_total_s": lambda: viterbi(bilinear_scores()),
        },
        args.repeats,
        warmup=args.warmup,
    )
    timings = {name: statistics.median(values) for name, values in times.items()}
    n_frames = len(lengths)
    result = {
        "frames": n_frames,
        "windows": args.windows,
        "tokens_padded": args.tokens,
        "tokens_real_per_frame_mean": float(np.mean(lengths)),
        "labels": n_labels,
        "threads": args.threads,
        **{k: round(v, 6) for k, v in timings.items()},
        # > 1: LAN decoding (scores + argmax) is faster than bilinear + Viterbi
        "speed_ratio_total": round(timings["bilinear_viterbi_total_s"] / timings["lan_total_s"], 3),
        "speed_ratio_decode_only": round(timings["viterbi_decode_s"] / timings["lan_decode_s"], 1),
        "lan_frames_per_s": round(n_frames / timings["lan_total_s"], 1),
        "bilinear_viterbi_frames_per_s": round(n_frames / timings["bilinear_viterbi_total_s"], 1),
    }
    if args.json:
        print(json.dumps({**result, "machine": machine()}))
        return
    print(
        f"{n_frames} frames over {args.windows} windows (T={args.tokens}, "
        f"{result['tokens_real_per_frame_mean']:.1f} real tokens/frame), {n_labels} BIO labels, "
        f"{args.threads} thread(s); median of {args.repeats}"
    )
    rows = [
        ("LAN", timings["lan_score_s"], timings["lan_decode_s"], timings["lan_total_s"]),
        (
            "bilinear + Viterbi",
            timings["bilinear_score_s"],
            timings["viterbi_decode_s"],
            timings["bilinear_viterbi_total_s"],
        ),
    ]
    print(f"{'':20} {'score ms':>10} {'decode ms':>10} {'total ms':>10} {'frames/s':>10}")
    for name, score, decode, total in rows:
        print(
            f"{name:20} {score * 1e3:10.2f} {decode * 1e3:10.2f} {total * 1e3:10.2f} "
            f"{n_frames / total:10.0f}"
        )
    print(
        f"speed ratio (bilinear+Viterbi time / LAN time): total {result['speed_ratio_total']}x, "
        f"decoding step only {result['speed_ratio_decode_only']}x"
    )
    print(describe())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
