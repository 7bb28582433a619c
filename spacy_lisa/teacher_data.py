"""A teacher's distributions as a training doc carries them (knowledge distillation).

:func:`spacy_lisa.pipeline.teacher.label_with_teacher` stores them in the reference doc's
``user_data[TEACHER_KEY]``, so they travel with the doc through ``DocBin``; the corpus
readers, which sit below the component, cut them with the doc's sentences. Stored form::

    {"roles": [label, ...], "tags": [label, ...],
     "tag_index": uint16 [n_tokens, k], "tag_prob": float16 [n_tokens, k],
     "frames": [[predicate token, role index [n_tokens, k], role prob [n_tokens, k]], ...]}

each distribution kept as its ``k`` most probable labels (indices into ``roles`` or
``tags``) with their probabilities.
"""

from __future__ import annotations

from typing import Any, Dict

TEACHER_KEY = "srl_teacher"


def slice_teacher(data: Dict[str, Any], start: int, end: int) -> Dict[str, Any]:
    """The teacher data of tokens [start, end) of a doc, for the doc of that span (the
    frames whose predicate lies in it; token offsets re-based)."""
    return {
        "roles": data["roles"],
        "tags": data["tags"],
        "tag_index": data["tag_index"][start:end],
        "tag_prob": data["tag_prob"][start:end],
        "frames": [
            [t - start, index[start:end], prob[start:end]]
            for t, index, prob in data["frames"]
            if start <= t < end
        ],
    }
