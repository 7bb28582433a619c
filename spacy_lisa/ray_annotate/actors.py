"""The workers of a Ray run: :class:`Annotator`, the callable class that
``Dataset.map_batches`` runs in a pool of Ray actors."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


class Annotator:
    """The callable class of ``map_batches``: one loaded pipeline per Ray actor. It
    returns one row per document (never dropped, even with no record), so that the
    writer can check each shard got exactly its documents."""

    def __init__(self, model: str, use_gpu: bool, batch_size: Optional[int], threads: int):
        import torch

        from ..loading import load_pipeline

        torch.set_num_threads(max(1, threads))
        # Ray sets CUDA_VISIBLE_DEVICES to the actor's GPU, which is then GPU 0
        self.nlp = load_pipeline(model, 0 if use_gpu else -1)
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        from ..formats import doc_to_jsonl_records, jsonl_text
        from ..inputs import output_keys

        texts = [str(t) for t in batch["text"]]
        out: Dict[str, List[Any]] = {"shard": [], "line": [], "records": [], "frames": []}
        docs = self.nlp.pipe(texts, batch_size=self.batch_size)
        rows = zip(docs, batch["shard"], batch["line"], batch["id"], strict=True)
        for doc, shard, line, id_ in rows:
            # the same extra keys as predict's JSON lines: "line", then "id" if given
            keys = output_keys(int(line), json.loads(str(id_)) if id_ else None)
            out["shard"].append(int(shard))
            out["line"].append(int(line))
            # the document's records as JSON lines, one string a document
            out["records"].append(jsonl_text(doc_to_jsonl_records(doc, extra=keys)))
            out["frames"].append(len(doc._.srl_frames))
        return out
