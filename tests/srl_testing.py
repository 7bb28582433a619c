"""Shared test helpers: a tiny lisa_srl model config that trains in seconds on CPU.

Importable from every test module (tests/ is on sys.path through its conftest).
"""

from typing import Any, Dict, Iterable, List, Tuple

TINY_MODEL: Dict[str, Any] = {
    "@architectures": "spacy-lisa.LISA.v1",
    "width": 32,
    "depth": 3,
    "n_heads": 4,
    "ffn_width": 64,
    "dropout": 0.0,
    "attention_dropout": 0.0,
    "tag_layer": 1,
    "parse_layer": 2,
    "parse_dep_width": 32,
    "parse_head_width": 32,
    "role_width": 32,
    "sense_head": "shared",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 32,
            "attrs": ["ORTH", "NORM", "SHAPE"],
            "rows": [500, 500, 100],
            "include_static_vectors": False,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 32,
            "depth": 1,
            "window_size": 1,
            "maxout_pieces": 2,
        },
    },
}


# word list, heads, deps, frames (predicate index, roleset, [(start, end, label)])
Sentence = Tuple[str, List[int], List[str], List[Tuple[int, str, List[Tuple[int, int, str]]]]]


def train_tiny_pipeline(
    sentences: Iterable[Sentence], model: Dict[str, Any], *, steps: int, **config: Any
) -> Any:
    """A sentencizer + ``lisa_srl`` (``model``) pipeline overfit on ``sentences`` (text
    with space-separated tokens, heads, deps, one-token predicates with their roles)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": model, **config})
    return overfit(nlp, gold_examples(nlp, sentences), steps=steps)


def gold_examples(nlp: Any, sentences: Iterable[Sentence]) -> List[Any]:
    """Examples of ``sentences``: the text through ``nlp``'s tokenizer, the reference
    with the gold parse and frames."""
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_lisa.frames import set_srl_frames

    examples = []
    for text, heads, deps, frames in sentences:
        reference = Doc(nlp.vocab, words=text.split(), heads=heads, deps=deps)
        set_srl_frames(
            reference,
            [
                {"predicate": [p, p + 1], "roleset": rs, "roles": [list(r) for r in roles]}
                for p, rs, roles in frames
            ],
        )
        examples.append(Example(nlp.make_doc(text), reference))
    return examples


def overfit(nlp: Any, examples: List[Any], *, steps: int) -> Any:
    """``nlp`` initialised on ``examples`` and updated ``steps`` times on all of them,
    without dropout (a tiny model learns them by heart)."""
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    return nlp


# word, tag, head (absolute index), dep; frames: (pred index, roleset, [(start, end, label)])
TAGGED_SENTENCES = [
    (
        "John sold the car to Mary .".split(),
        ["NNP", "VBD", "DT", "NN", "IN", "NNP", "."],
        [1, 1, 3, 1, 5, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "case", "obl", "punct"],
        [(1, "sell.01", [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2")])],
    ),
    (
        "Mary bought a book yesterday .".split(),
        ["NNP", "VBD", "DT", "NN", "NN", "."],
        [1, 1, 3, 1, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "obl:tmod", "punct"],
        [(1, "buy.01", [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP")])],
    ),
    (
        "The dog that barked ran away .".split(),
        ["DT", "NN", "WDT", "VBD", "VBD", "RB", "."],
        [1, 4, 3, 1, 4, 4, 4],
        ["det", "nsubj", "nsubj", "acl:relcl", "ROOT", "advmod", "punct"],
        [
            (3, "bark.01", [(0, 2, "ARG0"), (2, 3, "R-ARG0")]),
            (4, "run.02", [(0, 4, "ARG0"), (5, 6, "ARGM-DIR")]),
        ],
    ),
    (
        "She said she would come .".split(),
        ["PRP", "VBD", "PRP", "MD", "VB", "."],
        [1, 1, 4, 4, 1, 1],
        ["nsubj", "ROOT", "nsubj", "aux", "ccomp", "punct"],
        [
            (1, "say.01", [(0, 1, "ARG0"), (2, 5, "ARG1")]),
            (4, "come.01", [(2, 3, "ARG1"), (3, 4, "ARGM-MOD")]),
        ],
    ),
    (
        "Nice weather today .".split(),
        ["JJ", "NN", "NN", "."],
        [1, 1, 1, 1],
        ["amod", "ROOT", "obl:tmod", "punct"],
        [],
    ),
    (
        "Tom gave Anna flowers .".split(),
        ["NNP", "VBD", "NNP", "NNS", "."],
        [1, 1, 1, 1, 1],
        ["nsubj", "ROOT", "iobj", "obj", "punct"],
        [(1, "give.01", [(0, 1, "ARG0"), (2, 3, "ARG2"), (3, 4, "ARG1")])],
    ),
]


# text, heads (absolute), deps, frames as (predicate index, roleset, [(start, end, label)])
TEXT_SENTENCES: List[Sentence] = [
    (
        "John sold the car to Mary .",
        [1, 1, 3, 1, 5, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "case", "obl", "punct"],
        [(1, "sell.01", [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 6, "ARG2")])],
    ),
    (
        "Mary bought a book yesterday .",
        [1, 1, 3, 1, 1, 1],
        ["nsubj", "ROOT", "det", "obj", "obl:tmod", "punct"],
        [(1, "buy.01", [(0, 1, "ARG0"), (2, 4, "ARG1"), (4, 5, "ARGM-TMP")])],
    ),
    (
        "She said she would come .",
        [1, 1, 4, 4, 1, 1],
        ["nsubj", "ROOT", "nsubj", "aux", "ccomp", "punct"],
        [
            (1, "say.01", [(0, 1, "ARG0"), (2, 5, "ARG1")]),
            (4, "come.01", [(2, 3, "ARG1"), (3, 4, "ARGM-MOD")]),
        ],
    ),
    ("Nice weather today .", [1, 1, 1, 1], ["amod", "ROOT", "obl:tmod", "punct"], []),
    (
        "Tom gave Anna flowers .",
        [1, 1, 1, 1, 1],
        ["nsubj", "ROOT", "iobj", "obj", "punct"],
        [(1, "give.01", [(0, 1, "ARG0"), (2, 3, "ARG2"), (3, 4, "ARG1")])],
    ),
]


# a LisaTorchModel small enough to build and run in milliseconds (tests/models)
TINY_TORCH_SIZES: Dict[str, Any] = {
    "width": 16,
    "depth": 3,
    "n_heads": 4,
    "ffn_width": 32,
    "tag_layer": 1,
    "parse_layer": 2,
    "parse_dep_width": 12,
    "parse_head_width": 8,
    "role_width": 10,
    "sense_head": "shared",
}
# LisaTorchModel's keyword arguments that are not LisaSizes fields
TORCH_MODULE_OPTIONS = (
    "role_scorer",
    "top_layer",
    "n_senses",
    "n_lemmas",
    "n_pred_pos",
    "predicate_marker",
)


def tiny_lisa_torch(n_in: int, n_tags: int, n_deps: int, n_roles: int, **options: Any) -> Any:
    """A tiny ``LisaTorchModel`` built from seed 0: ``options`` override
    :data:`TINY_TORCH_SIZES` or name the module's optional parts
    (:data:`TORCH_MODULE_OPTIONS`)."""
    import torch

    from spacy_lisa.models.lisa_torch import LisaTorchModel
    from spacy_lisa.models.types import LisaSizes

    torch.manual_seed(0)
    parts = {k: options.pop(k) for k in TORCH_MODULE_OPTIONS if k in options}
    sizes = LisaSizes(**{**TINY_TORCH_SIZES, **options})
    return LisaTorchModel(n_in, n_tags, n_deps, n_roles, sizes, **parts)


# generated documents for the batch-prediction tests (predict, Ray, serve)
NAMES = ["John", "Mary", "Tom", "Anna", "The company", "She", "Our neighbour", "Bob"]
VERBS = ["sold", "bought", "gave", "found", "saw", "said"]
OBJECTS = ["the car", "a book", "flowers", "its shares", "a house", "the old bike"]
TAILS = ["to Mary", "yesterday", "last year", "", "in Paris"]


def make_texts(n: int, seed: int = 0) -> List[str]:
    """``n`` generated documents, some of two sentences."""
    import random

    rng = random.Random(seed)
    texts = []
    for i in range(n):
        parts = [rng.choice(NAMES), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)]
        text = " ".join(p for p in parts if p) + "."
        if i % 7 == 3:
            text += " Nice weather today."
        texts.append(text)
    return texts


def score_windows(
    model: Any,
    x: Any,
    mask: Any,
    *,
    heads: Any = None,
    given_rows: Any = None,
    own_parse: str = "soft",
    frame_window: Any = None,
    frame_pos: Any = None,
    predicate_tags: Any = None,
    dep_labels: bool = True,
    head_scores: bool = True,
) -> Any:
    """``LisaTorchModel`` on padded sentence windows (a ``ScoreRequest`` built from
    keywords)."""
    from spacy_lisa.models.lisa_batch import ScoreRequest

    request = ScoreRequest(
        heads=heads,
        given_rows=given_rows,
        own_parse=own_parse,
        dep_labels=dep_labels,
        head_scores=head_scores,
        frame_window=frame_window,
        frame_pos=frame_pos,
        predicate_tags=predicate_tags,
    )
    return model(x, mask, request)


def scoreless(value: Any) -> Any:
    """Frames (stored or ``to_dict`` form, in any nesting of lists, tuples and dicts)
    without their confidence scores. Scores move in the last float32 digits with the
    batch a doc is padded in, which changes no decision: equality tests of frames read
    the frames, :func:`assert_close_scores` the scores."""
    if isinstance(value, dict) and "predicate" in value and "roles" in value:
        frame = {k: v for k, v in value.items() if k not in ("score", "roleset_score")}
        frame["roles"] = [
            {k: v for k, v in r.items() if k != "score"} if isinstance(r, dict) else list(r[:3])
            for r in value["roles"]
        ]
        return frame
    if isinstance(value, dict):
        return {k: scoreless(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scoreless(v) for v in value)
    return value


def frame_scores(doc: Any) -> List[float]:
    """Every score of a doc's frames, in order: each frame's, its roleset's, its roles'."""
    scores: List[float] = []
    for frame in doc._.srl_frames:
        scores += [frame.score, frame.roleset_score] + [r._.srl_score for r in frame.roles]
    return [s for s in scores if s is not None]


def frame_scores_in(value: Any) -> List[float]:
    """Every confidence score in frames of any form and nesting (as :func:`scoreless`
    finds them), in order."""
    if isinstance(value, dict) and "predicate" in value and "roles" in value:
        found = [value[k] for k in ("score", "roleset_score") if value.get(k) is not None]
        for role in value["roles"]:
            score = role.get("score") if isinstance(role, dict) else (role[3:] or [None])[0]
            found += [score] if score is not None else []
        return found
    if isinstance(value, dict):
        return [s for v in value.values() for s in frame_scores_in(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in frame_scores_in(v)]
    return []


def assert_same_frames(got: Any, want: Any, atol: float = 1e-4) -> None:
    """``got`` holds the frames of ``want`` (any form and nesting), and their scores up to
    the float32 noise of the batch a doc was padded in."""
    assert scoreless(got) == scoreless(want)
    got_scores, want_scores = frame_scores_in(got), frame_scores_in(want)
    assert len(got_scores) == len(want_scores)
    assert all(abs(a - b) <= atol for a, b in zip(got_scores, want_scores, strict=True))
