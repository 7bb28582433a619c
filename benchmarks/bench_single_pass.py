"""Single-pass cost: LISA scores all predicates of a sentence from one encoding; earlier
SRL models (He et al. 2017, Tan et al. 2018) re-encode the sentence once per predicate
with a predicate-indicator embedding on the input.

Both sides use the same encoder (LISA defaults: width 256, 4 layers x 8 heads, FFN 512)
over the same 96-d token vectors (what the default Tok2Vec gives; the tok2vec itself is
shared by both and left out). LISA runs its full model (tagger, syntactic head, bilinear
role scorer) once per sentence; the baseline runs input projection + indicator embedding
+ encoder + a linear role classifier once per (sentence, predicate) pair, batched, which
favours the baseline (it skips the tagger and the parser).

    python benchmarks/bench_single_pass.py [--sentences 8] [--length 40] [--repeats 10]
    python benchmarks/bench_single_pass.py --train

Prints time per sentence (inference: eval mode, no_grad; with --train: forward +
backward; best of --repeats interleaved runs) as the number of predicates per sentence
grows, and the baseline / LISA ratio.
"""

from __future__ import annotations

import argparse
from functools import partial

import torch
from machine import describe, round_robin
from torch import Tensor, nn

from spacy_lisa.models.attention import EncoderLayer, MultiHeadSelfAttention, sinusoidal_positions
from spacy_lisa.models.lisa_torch import LisaTorchModel, ParseRequest, SentenceRequest
from spacy_lisa.models.types import LisaSizes

N_IN, N_TAGS, N_DEPS, N_ROLES = 96, 60, 50, 101


class ReencodeBaseline(nn.Module):
    """Encoder run once per predicate: input + predicate-indicator embedding, the LISA
    encoder layers, a per-token linear role classifier."""

    def __init__(self, width: int = 256, depth: int = 4, n_heads: int = 8, ffn_width: int = 512):
        super().__init__()
        self.width = width
        self.input_proj = nn.Linear(N_IN, width)
        self.indicator = nn.Embedding(2, width)  # 1 on the predicate, 0 elsewhere
        self.layers = nn.ModuleList(
            EncoderLayer(MultiHeadSelfAttention(width, n_heads, 0.1), width, ffn_width, 0.1)
            for _ in range(depth)
        )
        self.classify = nn.Linear(width, N_ROLES)

    def forward(self, x: Tensor, mask: Tensor, frame_window: Tensor, frame_pos: Tensor) -> Tensor:
        """x [B, T, n_in] -> role logits [F, T, n_roles], one encoding per frame."""
        F, T = frame_window.shape[0], x.shape[1]
        copies = x[frame_window]  # [F, T, n_in]: the sentence again for every predicate
        indicator = torch.zeros(F, T, dtype=torch.long)
        indicator[torch.arange(F), frame_pos] = 1
        states = self.input_proj(copies) + self.indicator(indicator)
        states = states + sinusoidal_positions(T, self.width)
        frame_mask = mask[frame_window]  # [F, T]
        for layer in self.layers:
            states = layer(states, frame_mask)
        return self.classify(states)


def run_lisa(
    model: LisaTorchModel, x: Tensor, mask: Tensor, window: Tensor, pos: Tensor, train: bool
) -> None:
    with torch.set_grad_enabled(train):
        parse = ParseRequest(own_parse="argmax")
        out = model(x, mask, SentenceRequest(parse, frame_window=window, frame_pos=pos))
        if train:  # every score receives a gradient, as in the real loss
            scores = (out.tag_scores, out.head_scores, out.dep_scores, out.role_scores)
            sum(s.sum() for s in scores).backward()  # type: ignore[union-attr]
            model.zero_grad(set_to_none=True)


def run_baseline(
    model: ReencodeBaseline, x: Tensor, mask: Tensor, window: Tensor, pos: Tensor, train: bool
) -> None:
    with torch.set_grad_enabled(train):
        out = model(x, mask, window, pos)
        if train:
            out.sum().backward()
            model.zero_grad(set_to_none=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=8, help="sentences per batch")
    parser.add_argument("--length", type=int, default=40, help="tokens per sentence")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--predicates", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument(
        "--train", action="store_true", help="time forward + backward (dropout on) instead"
    )
    args = parser.parse_args()
    torch.manual_seed(0)
    # the sizes BENCHMARKS.md reports for this benchmark (LISA.v1's defaults until commit 5520585)
    lisa = LisaTorchModel(
        N_IN,
        N_TAGS,
        N_DEPS,
        N_ROLES,
        LisaSizes(
            width=256, ffn_width=512, parse_dep_width=256, parse_head_width=128, role_width=200
        ),
    ).train(args.train)
    baseline = ReencodeBaseline().train(args.train)
    B, T = args.sentences, args.length
    x = torch.randn(B, T, N_IN)
    mask = torch.ones(B, T, dtype=torch.bool)
    print(describe())
    print(f"{B} sentences x {T} tokens per batch, best of {args.repeats}; "
          f"{'forward + backward' if args.train else 'inference (no_grad)'}")  # fmt: skip
    print(f"{'predicates':>10} {'LISA ms/sent':>13} {'re-encode ms/sent':>18} {'ratio':>6}")
    for k in args.predicates:
        # k predicates per sentence, spread over the sentence
        frame_window = torch.arange(B).repeat_interleave(k)
        frame_pos = torch.linspace(0, T - 1, k).long().repeat(B)

        batch = (x, mask, frame_window, frame_pos, args.train)
        runs = {
            "lisa": partial(run_lisa, lisa, *batch),
            "baseline": partial(run_baseline, baseline, *batch),
        }
        # the minimum (as timeit recommends), not the mean: the noise only ever adds time
        times, _ = round_robin(runs, args.repeats, warmup=1)
        best = {name: min(values) for name, values in times.items()}
        t_lisa, t_base = best["lisa"] / B * 1000, best["baseline"] / B * 1000
        print(f"{k:>10} {t_lisa:>13.2f} {t_base:>18.2f} {t_base / t_lisa:>6.1f}")
    print(describe())


if __name__ == "__main__":
    main()
