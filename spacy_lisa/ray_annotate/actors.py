"""The workers of a Ray run: :class:`Annotator`, the callable class that
``Dataset.map_batches`` runs in a pool of Ray actors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional

# Fault injection for the tests: "ID|MARKER_FILE" makes an actor exit (os._exit) the
# first time it sees a document with that input id, if MARKER_FILE does not exist yet
# (it is created first, so the restarted actor goes on).
CRASH_ENV = "SPACY_LISA_RAY_CRASH_ONCE"


# ------------------------------------------------------------------- workers --------
class Annotator:
    """The callable class of ``map_batches``: one loaded pipeline per Ray actor."""

    def __init__(self, model: str, use_gpu: bool, batch_size: Optional[int], threads: int):
        import torch

        from ..cli._io import load_pipeline

        torch.set_num_threads(max(1, threads))
        # Ray sets CUDA_VISIBLE_DEVICES to the actor's GPU, which is then GPU 0
        self.nlp = load_pipeline(model, 0 if use_gpu else -1)
        self.batch_size = batch_size
        self.crash = os.environ.get(CRASH_ENV, "")

    def _maybe_crash(self, ids: List[str]) -> None:
        target, _, marker = self.crash.partition("|")
        if json.dumps(target) in ids and marker and not os.path.exists(marker):
            Path(marker).touch()
            os._exit(1)

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        from ..formats import doc_to_jsonl_records

        texts = [str(t) for t in batch["text"]]
        ids = [str(i) for i in batch["id"]]
        if self.crash:
            self._maybe_crash(ids)
        shards: List[int] = []
        lines: List[int] = []
        records: List[str] = []
        frames: List[int] = []
        docs = self.nlp.pipe(texts, batch_size=self.batch_size)
        for doc, shard, line, id_ in zip(docs, batch["shard"], batch["line"], ids, strict=True):
            # the same extra keys as predict's JSON lines: "line", then "id" if given
            extra: Dict[str, Any] = {"line": int(line)}
            if id_:
                extra["id"] = json.loads(id_)
            for record in doc_to_jsonl_records(doc, extra=extra):
                shards.append(int(shard))
                lines.append(int(line))
                records.append(json.dumps(record, ensure_ascii=False))
                frames.append(len(record["frames"]))
        return {"shard": shards, "line": lines, "record": records, "frames": frames}
