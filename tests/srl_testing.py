"""Shared test helpers: a tiny lisa_srl model config that trains in seconds on CPU.

Importable from every test module (tests/ is on sys.path through its conftest).
"""

from typing import Any, Dict

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
