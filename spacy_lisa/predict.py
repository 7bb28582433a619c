"""Labelling a file of documents with a trained pipeline (``spacy-lisa predict`` as a
function), and writing an output file atomically or UTF-8 to stdout."""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    TextIO,
    Tuple,
    cast,
)

from spacy.language import Language
from spacy.tokens import Doc
from tqdm import tqdm

from .device import select_device
from .errors import Errors, UserError
from .formats import OutputFormat, formatter_for
from .frames import doc_sentences
from .input_docs import (
    STDIN,
    InputDoc,
    InputFormat,
    InputSource,
    InputSummary,
    iter_docs,
    scan_input,
    skip_report,
)
from .loading import load_pipeline
from .patches import cached_msgpack_codecs


@contextmanager
def open_output(path: Optional[Path]) -> Iterator[TextIO]:
    """A UTF-8 text stream to ``path``, or stdout when ``path`` is ``None`` or ``-``.
    A file is written next to its destination and moved into place only when the
    block succeeds, so a failed or interrupted run never leaves half an output. It gets
    the mode a file opened for writing would have: the old file's, or for a new one
    0666 less the umask (not the temporary file's private 0600)."""
    if path is None or str(path) == STDIN:
        yield from _stdout_utf8()
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.NamedTemporaryFile(
            "w",
            encoding="utf8",
            newline="\n",
            dir=path.parent,
            prefix=f".{path.name}.",
            delete=False,
        )
    except OSError as err:
        raise UserError(Errors.E318.format(path=path, detail=err.strerror or err)) from None
    try:
        with tmp:
            os.fchmod(tmp.fileno(), _file_mode(path))
            yield cast(TextIO, tmp)
        os.replace(tmp.name, path)
    except BaseException:
        Path(tmp.name).unlink(missing_ok=True)
        raise


def _file_mode(path: Path) -> int:
    """The permission bits ``open(path, "w")`` would leave ``path`` with."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask. Linux shows it in /proc; elsewhere it is read by setting
    it, which is how the umask can be read at all, and set back at once."""
    with suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status", encoding="ascii") as f:
            return int(next(line for line in f if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _stdout_utf8() -> Iterator[TextIO]:
    """stdout as UTF-8 whatever the locale (JSON and CoNLL output are UTF-8 files)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stdout (some embedding shells): use it as it is
        yield sys.stdout
        return
    stream = io.TextIOWrapper(buffer, encoding="utf8", newline="\n")
    try:
        yield stream
    finally:
        # detach, not close: closing the wrapper would close the process's stdout
        with suppress(BrokenPipeError):
            stream.detach()


def output_name(output: Optional[Path]) -> str:
    """Where ``output`` goes, as the end-of-run messages name it."""
    return str(output) if output is not None and str(output) != STDIN else "stdout"


def load_and_scan(
    model: str,
    gpu_id: int,
    source: InputSource,
    input_format: InputFormat,
    skip_invalid: bool,
    srl_options: Optional[Mapping[str, Any]] = None,
) -> Tuple[Language, InputSummary]:
    """The pipeline ``model`` (with ``srl_options``, see
    :func:`~spacy_lisa.loading.load_pipeline`) and the scan of ``source`` (its format,
    documents, skips), with a document longer than the pipeline's ``nlp.max_length`` an
    invalid line (``too_long``). The input is scanned before the pipeline loads, so that
    bad input stops the run at once, and again with the limit only where a document is
    longer."""
    summary = scan_input(source, input_format, skip_invalid=skip_invalid)
    nlp = load_pipeline(model, gpu_id, srl_options)
    max_length = int(nlp.max_length)
    if summary.longest > max_length:
        # only the loaded pipeline knows its limit; spaCy would end the run on such a
        # text (E088), so they are found now, before anything is written
        summary = scan_input(
            source, summary.format, skip_invalid=skip_invalid, max_length=max_length
        )
    return nlp, summary


def predict(
    model: str,
    input_path: str,
    *,
    output: Optional[Path] = None,
    output_format: OutputFormat = OutputFormat.jsonl,
    input_format: InputFormat = InputFormat.auto,
    batch_size: Optional[int] = None,
    n_process: int = 1,
    gpu_id: int = -1,
    skip_invalid: bool = False,
    tags: bool = True,
    srl_options: Optional[Mapping[str, Any]] = None,
    echo: Optional[Callable[[str], None]] = None,
) -> Dict[str, Any]:
    """Label the documents of ``input_path`` (see :mod:`spacy_lisa.input_docs`) and write
    one record per sentence to ``output`` (stdout when ``None``); returns the run's
    counts (``docs``, ``sentences``, ``frames``, ``skipped`` lines by reason) and
    timing, and gives ``echo`` the end-of-run summary lines. The device is checked
    first: a GPU that cannot be used stops the run before the input is read.

    ``tags=False`` leaves each frame's BIO ``tags`` (and ``untagged_roles``) out of the
    JSON lines, so that a record grows linearly with its sentence (the command line's
    default; ``--tags`` puts them back). A document longer than the pipeline's
    ``nlp.max_length`` is an invalid line (``too_long``), found once the pipeline is
    loaded and before anything is written. ``srl_options``: ``lisa_srl`` options of
    this run over the pipeline's config (``--predicate-pos``: ``{"predicate_pos":
    ["VERB"]}``)."""
    if n_process != 1 and gpu_id >= 0:
        raise UserError(Errors.E456.format(n_process=n_process, gpu_id=gpu_id))
    select_device(gpu_id)
    source = InputSource(input_path)
    nlp, summary = load_and_scan(model, gpu_id, source, input_format, skip_invalid, srl_options)
    output_format = OutputFormat(output_format)
    formatter = formatter_for(output_format, tags=tags)
    start = time.perf_counter()
    documents = iter_docs(source, summary.format, max_length=int(nlp.max_length))
    # the workers send every doc back through srsly's msgpack: without the cache, each
    # call scans the codec registries (this process and the workers it forks)
    codecs = cached_msgpack_codecs() if n_process != 1 else nullcontext()
    with codecs, open_output(output) as out:
        docs = nlp.pipe(
            ((item.text, item) for item in documents),
            as_tuples=True,
            batch_size=batch_size,
            n_process=n_process,
        )
        stats = _write_records(out, docs, formatter, total=summary.n_docs)
    seconds = time.perf_counter() - start
    stats["seconds"] = seconds
    stats["docs_per_second"] = stats["docs"] / seconds if seconds > 0 else 0.0
    stats["skipped"] = dict(summary.skipped)
    if echo is not None:
        for line in _run_report(stats, summary, output, output_format):
            echo(line)
    return stats


def _write_records(
    out: TextIO,
    docs: Iterable[Tuple[Doc, InputDoc]],
    formatter: Callable[[Doc, InputDoc], str],
    *,
    total: int,
) -> Dict[str, Any]:
    """Write the records of the labelled ``docs`` to ``out``; returns their counts."""
    stats: Dict[str, Any] = {"docs": 0, "sentences": 0, "frames": 0}
    # delay: short runs (and tests) print no bar; long ones show docs/s on stderr
    with tqdm(
        total=total, unit="doc", delay=1.0, mininterval=0.5, file=sys.stderr, leave=False
    ) as bar:
        for doc, item in docs:
            out.write(formatter(doc, item))
            stats["docs"] += 1
            stats["sentences"] += len(doc_sentences(doc))
            stats["frames"] += len(doc._.srl_frames)
            bar.update(1)
    out.flush()
    return stats


def _run_report(
    stats: Dict[str, Any],
    summary: InputSummary,
    output: Optional[Path],
    output_format: OutputFormat,
) -> List[str]:
    """The end-of-run summary lines: the counts and speed, then the skip report."""
    done = (
        f"✔ Labelled {int(stats['docs'])} doc(s), {int(stats['sentences'])} sentence(s), "
        f"{int(stats['frames'])} frame(s) in {stats['seconds']:.1f}s "
        f"({stats['docs_per_second']:.1f} docs/s) → {output_name(output)} "
        f"({output_format.value})"
    )
    return [done, *skip_report(summary.skipped, summary.problems)]


__all__ = ["load_and_scan", "open_output", "output_name", "predict"]
