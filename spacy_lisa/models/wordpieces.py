"""Words to wordpieces for ``spacy-lisa.TransformerTok2Vec.v1``: the tokenizer's
settings, the encoder's window limit, the windows a batch of docs (or of marked
predicates) makes, their padded sub-batches, and the LRU that keeps values of windows by
their words (:class:`WindowCache`: their pieces, a frozen transformer's outputs).

Pre-tokenised words are mapped to pieces as they are in running text whatever the saved
tokenizer's settings (:func:`prefix_spaced`): WordPiece (BERT, ELECTRA, DistilBERT),
byte-level BPE (RoBERTa, ModernBERT) and SentencePiece ``▁`` (XLM-R, DeBERTa-v3). A window
is a sentence (:func:`~spacy_lisa.frames.doc_sentences`: or the whole doc), cut greedily
by words where it has more pieces than the encoder takes (:func:`max_positions`, less
its special tokens).

torch and tokenizers are imported inside functions only (spaCy imports the
architecture's module through an entry point).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Generic, List, Optional, Tuple, TypeVar

import numpy
from spacy.tokens import Doc

from ..errors import Errors
from ..frames import sentence_bounds

V = TypeVar("V")


def prefix_spaced(tokenizer: Any) -> Any:
    """``tokenizer`` (fast) with a space before every pre-tokenised word, as the word has
    in running text: byte-level BPE (RoBERTa, ModernBERT) is often saved without
    (``add_prefix_space = false``, e.g. roberta-base), so that a word inside a sentence
    would get the pieces of a word-initial string ("sold" -> "s", "old" instead of
    "Ġsold"), and RobertaTokenizerFast refuses pre-tokenised input. A SentencePiece
    Metaspace that never prepends ``▁`` is set to always. WordPiece has no such setting.
    Changes the tokenizer in place (and what it saves); returns it."""
    from tokenizers import Tokenizer

    backend = tokenizer.backend_tokenizer
    state = json.loads(backend.to_str())
    changed = False
    byte_level = False
    for node in _pre_tokenizers(state.get("pre_tokenizer")):
        if node.get("type") == "ByteLevel":
            byte_level = True
            changed |= not node.get("add_prefix_space", False)
            node["add_prefix_space"] = True
        elif node.get("type") == "Metaspace" and node.get("prepend_scheme") == "never":
            changed = True
            node["prepend_scheme"] = "always"
    if changed:  # rebuilt from the edited JSON state
        backend.pre_tokenizer = Tokenizer.from_str(json.dumps(state)).pre_tokenizer
    if byte_level:
        # RobertaTokenizerFast checks it for is_split_into_words; saved, it keeps
        # RobertaTokenizerFast.__init__ from setting the pre-tokenizer back
        tokenizer.add_prefix_space = True
        tokenizer.init_kwargs["add_prefix_space"] = True
    return tokenizer


def _pre_tokenizers(node: Any) -> List[Dict[str, Any]]:
    """The pre-tokenizers in a pre-tokenizer's JSON state, Sequences flattened."""
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        return [leaf for child in node.get("pretokenizers", []) for leaf in _pre_tokenizers(child)]
    return [node]


def special_ids(tokenizer: Any) -> Tuple[List[int], List[int]]:
    """The special token ids the tokenizer's post-processor puts before and after a
    sequence (BERT: [CLS] / [SEP]; RoBERTa, XLM-R: <s> / </s>), read from an encoding of
    one word: also right for a plain PreTrainedTokenizerFast (ModernBERT), whose
    ``build_inputs_with_special_tokens`` adds nothing."""
    enc = tokenizer([["a"]], is_split_into_words=True, add_special_tokens=True)
    ids, word_ids = enc["input_ids"][0], enc.word_ids(0)
    content = [i for i, w in enumerate(word_ids) if w is not None]
    if not content:  # the probe word has no piece: the tokenizer adds nothing around it
        return list(ids), []
    prefix, suffix = list(ids[: content[0]]), list(ids[content[-1] + 1 :])
    if not prefix and not suffix:
        # a tokenizer.json without post-processor: the class's own rule, if it has one
        probe = tokenizer.build_inputs_with_special_tokens([-1])
        if -1 in probe:
            at = probe.index(-1)
            prefix, suffix = probe[:at], probe[at + 1 :]
    return prefix, suffix


def max_positions(transformer: Any, tok: Any) -> int:
    """Most wordpieces (special tokens included) the transformer takes in one window:
    its ``max_position_embeddings``, less the offset of RoBERTa-style learned positions
    (RoBERTa, XLM-R, CamemBERT: ids start after ``padding_idx``, so 514 rows hold 512
    positions), and at most the tokenizer's ``model_max_length`` where that is set."""
    import torch

    limit = int(getattr(transformer.config, "max_position_embeddings", 0) or 0)
    embeddings = getattr(transformer, "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    if isinstance(positions, torch.nn.Embedding) and positions.padding_idx is not None:
        limit = positions.num_embeddings - positions.padding_idx - 1
    # transformers' VERY_LARGE_INTEGER (1e30) where the tokenizer was saved without one
    model_max = int(getattr(tok, "model_max_length", 0) or 0)
    if 0 < model_max < 1_000_000 and (not limit or model_max < limit):
        limit = model_max
    return limit or 512  # neither says: BERT's


# --- input preparation -------------------------------------------------------------


def max_content(transformer: Any, tokenizer: Any, special: Tuple[List[int], List[int]]) -> int:
    """Most content wordpieces per window (:func:`max_positions` less the special
    tokens ``special``)."""
    prefix, suffix = special
    return max(1, max_positions(transformer, tokenizer) - len(prefix) - len(suffix))


def _split_by_pieces(
    word_ids: List[Optional[int]], n_words: int, limit: int
) -> List[Tuple[int, int]]:
    """Split a window (word range [0, n_words)) greedily so that each part has at most
    ``limit`` wordpieces; returns word ranges."""
    counts = numpy.bincount([w for w in word_ids if w is not None], minlength=n_words)
    parts: List[Tuple[int, int]] = []
    start, total = 0, 0
    for i, c in enumerate(counts.tolist()):
        if total + c > limit and i > start:
            parts.append((start, i))
            start, total = i, 0
        total += c
    parts.append((start, n_words))
    return parts


# (output row of the window's first token, its words, the marked word's index or None)
RawWindow = Tuple[int, List[str], Optional[int]]


@dataclass
class MarkedWindows:
    """Input of ``TransformerTok2Vec.v1`` for predicate-aware encoding: per item ``(doc,
    start, end, predicate)``, the tokens ``[start, end)`` of ``docs[doc]`` as one window
    whose token ``predicate`` (an absolute index inside it) is marked: its wordpieces
    get mark 1, every other wordpiece 0, passed as token type (as AllenNLP's BERT SRL
    marks the verb) or as the learned indicator (``predicate_mark``).
    The output holds one ``[end - start, H]`` array per item, in item order."""

    docs: List[Doc]
    items: List[Tuple[int, int, int, int]]


def doc_windows(docs: List[Doc]) -> Tuple[List[RawWindow], List[int]]:
    """The windows the transformer sees in ``docs`` (sentences, or whole docs), as (output
    row of the first token, words, None), and the rows of each doc's output array."""
    raw: List[RawWindow] = []
    offset = 0
    for doc in docs:
        words = [t.text for t in doc]
        for start, end in sentence_bounds(doc):
            raw.append((offset + start, words[start:end], None))
        offset += len(doc)
    return raw, [len(doc) for doc in docs]


def marked_windows(X: MarkedWindows) -> Tuple[List[RawWindow], List[int]]:
    """The windows of ``X``, one per item, as (output row of the first token, words,
    the marked word), and the rows of each item's output array."""
    raw: List[RawWindow] = []
    offset = 0
    words_of: Dict[int, List[str]] = {}
    lengths = []
    for doc_i, start, end, predicate in X.items:
        if not start <= predicate < end <= len(X.docs[doc_i]):
            raise ValueError(
                Errors.E156.format(
                    doc=doc_i,
                    n_tokens=len(X.docs[doc_i]),
                    message=f"marked window ({start}, {end}) with predicate {predicate}",
                )
            )
        if doc_i not in words_of:
            words_of[doc_i] = [t.text for t in X.docs[doc_i]]
        raw.append((offset, words_of[doc_i][start:end], predicate - start))
        lengths.append(end - start)
        offset += end - start
    return raw, lengths


# a window's content wordpiece ids and the word index of each (None: no word)
Pieces = Tuple[List[int], List[Any]]


class WindowCache(Generic[V]):
    """Values of windows keyed by the window's words, LRU, bounded by the total size of
    the values stored (by default a window's number of words): the wordpieces of each
    window, the pooled per-layer outputs ([K, n, H] float16 numpy) of a frozen
    transformer's windows, the boundary states ([n_pieces, H]) of a partially frozen
    one (the transformer sees nothing outside its window, so the words determine the
    output). Past ``max_tokens`` the least recently used windows leave."""

    def __init__(self, max_tokens: int):
        self.max_tokens = max_tokens
        self.n_tokens = 0
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[Tuple[str, ...], Tuple[V, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()
        self.n_tokens = 0
        self.hits = self.misses = 0

    def get(self, key: Tuple[str, ...]) -> Optional[V]:
        entry = self._data.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._data.move_to_end(key)
        return entry[0]

    def put(self, key: Tuple[str, ...], value: V, size: Optional[int] = None) -> None:
        """Keep ``value`` for ``key``, counting ``size`` (default: its number of words)
        against ``max_tokens``; a value larger than the cap is not kept."""
        size = len(key) if size is None else size
        if not self.max_tokens or size > self.max_tokens or key in self._data:
            return
        self._data[key] = (value, size)
        self.n_tokens += size
        while self.n_tokens > self.max_tokens:
            _, (_, old_size) = self._data.popitem(last=False)
            self.n_tokens -= old_size


def plan_windows(
    tokenizer: Any, raw: List[RawWindow], limit: int, pieces: Optional[WindowCache[Pieces]] = None
) -> List[Window]:
    """The windows ``raw`` in order, tokenised (one fast-tokenizer call over the distinct
    windows not in ``pieces``: a sentence's marked copies share theirs, and a sentence
    seen before keeps its pieces), with windows over ``limit`` content pieces split
    greedily by words."""
    if not raw:
        return []
    encoded: Dict[Tuple[str, ...], Pieces] = {}
    missing: Dict[Tuple[str, ...], None] = {}  # in order, once each
    for _, words, _ in raw:
        key = tuple(words)
        if key in encoded or key in missing:
            continue
        hit = pieces.get(key) if pieces is not None else None
        if hit is None:
            missing[key] = None
        else:
            encoded[key] = hit
    if missing:
        enc = tokenizer(
            [list(words) for words in missing], is_split_into_words=True, add_special_tokens=False
        )
        for k, key in enumerate(missing):
            encoded[key] = (enc.encodings[k].ids, enc.word_ids(k))
            if pieces is not None:
                pieces.put(key, encoded[key])
    windows: List[Window] = []
    for start, words, mark in raw:
        ids, word_ids = encoded[tuple(words)]
        if len(ids) <= limit:
            windows.append(Window(start, words, ids, word_ids, mark))
            continue
        for b, e in _split_by_pieces(word_ids, len(words), limit):
            keep = [j for j, w in enumerate(word_ids) if w is not None and b <= w < e]
            keep = keep[:limit]  # a single word over the limit is truncated
            windows.append(
                Window(
                    start + b,
                    words[b:e],
                    [ids[j] for j in keep],
                    [word_ids[j] - b for j in keep],  # type: ignore[operator]
                    mark - b if mark is not None and b <= mark < e else None,
                )
            )
    return windows


class Window:
    """A transformer input: output row of its first token, its words, its content
    wordpiece ids with their word index (None: no word), and the index of its marked
    word (predicate-aware encoding) or None."""

    __slots__ = ("start", "words", "ids", "word_ids", "mark")

    def __init__(
        self,
        start: int,
        words: List[str],
        ids: List[int],
        word_ids: List[Any],
        mark: Optional[int] = None,
    ):
        self.start = start
        self.words = words
        self.ids = ids
        self.word_ids = word_ids
        self.mark = mark


# a window's transformer input: wordpiece ids (special tokens included), the global
# token row of each (-1: none) and its mark (1 on the marked word's pieces)
PieceRow = Tuple[List[int], List[int], List[int]]


def sub_batches(
    windows: List[Window],
    *,
    special: Tuple[List[int], List[int]],
    pad_id: int,
    budget: int,
    device: Any,
) -> List[Any]:
    """Add the special tokens ``special``, map wordpieces to global token rows and
    group the windows into length-sorted sub-batches of at most ``budget`` padded
    pieces, as tensors on ``device``."""
    import torch

    from .transformer_torch import SubBatch

    if not windows:
        return []
    marked = any(win.mark is not None for win in windows)
    rows = [_piece_row(win, special) for win in windows]
    subs = []
    for group in _length_groups([len(row[0]) for row in rows], budget):
        L = max(len(rows[i][0]) for i in group)
        ids_arr = numpy.full((len(group), L), pad_id, dtype="int64")
        mask_arr = numpy.zeros((len(group), L), dtype="int64")
        index_arr = numpy.full((len(group), L), -1, dtype="int64")
        marks_arr = numpy.zeros((len(group), L), dtype="int64")
        for r, i in enumerate(group):
            n = len(rows[i][0])
            ids_arr[r, :n] = rows[i][0]
            mask_arr[r, :n] = 1
            index_arr[r, :n] = rows[i][1]
            marks_arr[r, :n] = rows[i][2]
        subs.append(
            SubBatch(
                input_ids=torch.from_numpy(ids_arr).to(device),
                attention_mask=torch.from_numpy(mask_arr).to(device),
                token_index=torch.from_numpy(index_arr.reshape(-1)).to(device),
                marks=torch.from_numpy(marks_arr).to(device) if marked else None,
                windows=[windows[i] for i in group],
            )
        )
    return subs


def _piece_row(win: Window, special: Tuple[List[int], List[int]]) -> PieceRow:
    """The window's pieces between the special tokens, their token rows and marks."""
    prefix, suffix = special
    n_prefix, n_suffix = len(prefix), len(suffix)
    index = [-1 if w is None else win.start + w for w in win.word_ids]
    # mark 1 on every wordpiece of the marked word
    marks = [int(w is not None and w == win.mark) for w in win.word_ids]
    return (
        prefix + list(win.ids) + suffix,
        [-1] * n_prefix + index + [-1] * n_suffix,
        [0] * n_prefix + marks + [0] * n_suffix,
    )


def _length_groups(lengths: List[int], budget: int) -> List[List[int]]:
    """Indices of ``lengths`` sorted by length and cut into groups: a group grows while
    rows x longest stays under ``budget``, so that padding stays small."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: List[List[int]] = []
    current: List[int] = []
    for i in order:
        longest = lengths[i]  # ascending: the new row is the longest
        if current and (len(current) + 1) * longest > budget:
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups
