"""Write a training config that continues a cut or finished run from its saved pipeline.

    python scripts/resume_config.py configs/lisa_trf.cfg training/lisa_trf/model-last \
        training/lisa_trf_resume.cfg
    python -m spacy train training/lisa_trf_resume.cfg --output training/lisa_trf_2 \
        --training.max_steps 4000 --training.optimizer.learn_rate.warmup_steps 200

The component block becomes ``source = MODEL_DIR``: spaCy loads its trained weights and
resumes training it (``nlp.resume_training``) instead of initialising it again. Everything
else (corpora, batcher, optimizer, schedule) comes from CONFIG and may be overridden on the
``spacy train`` command line. The optimizer's moment estimates are not saved with a
pipeline, so give the new schedule a short warm-up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spacy.util import load_config


def resume_config(config_path: Path, model_dir: Path, component: str = "lisa_srl"):
    """Return CONFIG with COMPONENT sourced from MODEL_DIR."""
    if not (model_dir / component).is_dir():
        raise SystemExit(
            f"{model_dir} holds no '{component}' component: pass a pipeline directory "
            "written by spacy train (model-last or model-best)"
        )
    config = load_config(config_path, interpolate=False)
    if component not in config["components"]:
        raise SystemExit(f"{config_path} defines no component '{component}'")
    config["components"][component] = {"source": str(model_dir)}
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path, help="the config the run was trained with")
    parser.add_argument("model_dir", type=Path, help="its model-last or model-best")
    parser.add_argument("output", type=Path, help="where to write the resuming config")
    parser.add_argument("--component", default="lisa_srl")
    args = parser.parse_args()
    config = resume_config(args.config, args.model_dir, args.component)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(args.output)
    print(f"Wrote {args.output}: '{args.component}' sourced from {args.model_dir}")


if __name__ == "__main__":
    main()
