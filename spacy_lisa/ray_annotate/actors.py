"""The workers of a Ray run: :class:`Annotator`, the callable class that
``Dataset.map_batches`` runs in a pool of Ray actors."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional


class Annotator:
    """The callable class of ``map_batches``: one loaded pipeline per Ray actor. It
    returns one row per document (never dropped, even with no record), so that the
    writer can check each shard got exactly its documents. A document longer than the
    pipeline's ``nlp.max_length`` (known only here, where the pipeline is loaded) is not
    labelled: its row carries E351 as ``problem`` (``""`` for the others) and no record,
    and the driver skips and counts it (``too_long``) or stops the run on it.

    ``paths``: the input file of each shard index (for the message); ``tags``: each
    frame's BIO tags in the records (``predict --tags``); ``srl_options``: the
    ``lisa_srl`` options of the run (``predict --predicate-pos``)."""

    def __init__(
        self,
        model: str,
        use_gpu: bool,
        batch_size: Optional[int],
        threads: int,
        tags: bool = False,
        paths: Optional[Mapping[int, str]] = None,
        srl_options: Optional[Mapping[str, Any]] = None,
    ):
        import torch

        from ..loading import load_pipeline

        torch.set_num_threads(max(1, threads))
        # Ray sets CUDA_VISIBLE_DEVICES to the actor's GPU, which is then GPU 0
        self.nlp = load_pipeline(model, 0 if use_gpu else -1, srl_options)
        self.batch_size = batch_size
        self.tags = tags
        self.paths = dict(paths or {})

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        from ..formats import doc_to_jsonl_records, jsonl_text
        from ..input_docs import output_keys

        texts = [str(t) for t in batch["text"]]
        problems = [
            self._too_long(text, int(shard), int(line))
            for text, shard, line in zip(texts, batch["shard"], batch["line"], strict=True)
        ]
        # spaCy would refuse a text past nlp.max_length with E088, failing the batch
        docs = iter(
            self.nlp.pipe(
                [t for t, p in zip(texts, problems, strict=True) if not p],
                batch_size=self.batch_size,
            )
        )
        out: Dict[str, List[Any]] = {
            "shard": [],
            "line": [],
            "records": [],
            "frames": [],
            "problem": [],
        }
        rows = zip(problems, batch["shard"], batch["line"], batch["id"], strict=True)
        for problem, shard, line, id_ in rows:
            out["shard"].append(int(shard))
            out["line"].append(int(line))
            out["problem"].append(problem)
            if problem:
                out["records"].append("")
                out["frames"].append(0)
                continue
            doc = next(docs)
            # the same extra keys as predict's JSON lines: "line", then "id" if given
            keys = output_keys(int(line), json.loads(str(id_)) if id_ else None)
            # the document's records as JSON lines, one string a document
            records = doc_to_jsonl_records(doc, extra=keys, tags=self.tags)
            out["records"].append(jsonl_text(records))
            out["frames"].append(len(doc._.srl_frames))
        return out

    def _too_long(self, text: str, shard: int, line: int) -> str:
        """E351 for a text longer than the pipeline takes, else ``""``."""
        from ..errors import Errors
        from ..input_docs import excerpt

        max_length = int(self.nlp.max_length)
        if len(text) <= max_length:
            return ""
        return Errors.E351.format(
            path=self.paths.get(shard, f"shard {shard}"),
            line=line,
            n=len(text),
            max_length=max_length,
            excerpt=excerpt(text),
        )
