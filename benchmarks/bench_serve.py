"""Throughput and latency of ``spacy-lisa serve`` against ``nlp.pipe`` on the same texts,
in one run:

    python benchmarks/bench_serve.py MODEL [--texts FILE | --dev corpus/dev.spacy]
        [--unit sentence | document] [--limit 2000] [--clients 16] [--texts-per-request 1]
        [--duration 30]
        [--batch-size N] [--max-wait-ms 5] [--torch-threads N] [--server-torch-threads N]
        [--no-model-process] [--single 300]
        [--json results.json]

    # lisa_cpu on EWT dev sentences (the figures of BENCHMARKS.md)
    python benchmarks/bench_serve.py training/lisa_cpu/model-best --json serve.json
    # what users send: whole EWT dev documents as raw text, through the packaged pipeline
    python benchmarks/bench_serve.py training/pipelines/lisa_cpu_distilled \
        --dev corpus/dev.docs.spacy --unit document

1. ``nlp.pipe``: the texts through ``nlp.pipe(texts, batch_size=--pipe-batch-size)`` in
   this process, after a warm-up; docs/s and words/s (tokens of the docs).
2. The server: ``spacy-lisa serve MODEL`` started as a user starts it (its own process,
   ``--port 0``; ``--batch-size`` defaults to clients x texts per request, so that a
   batch closes once every client's request is in rather than at ``--max-wait-ms``),
   then ``--clients`` clients, each a thread with one keep-alive HTTP connection, send
   ``POST /v1/annotate`` requests of one text (``--texts-per-request``) back to back for
   ``--duration`` seconds (texts taken round-robin); docs/s, words/s (the tokens of
   the records returned), latency p50/p99 and errors (any non-200 answer or a reply
   whose records do not parse counts). The server's ``/metrics`` give the mean batch
   size it ran.
3. One client, one text (the one of median length: a sentence, or a document),
   ``--single`` requests in a row on the otherwise idle server: p50/p99 latency.
4. ``nlp.pipe`` again, and the server stopped with SIGTERM (it must exit 0).
5. ``nlp.pipe`` in batches no larger than clients x texts per request: the most the
   server's batches can give, since no batch can hold more documents than are in
   flight at once (printed as a share of the baseline).

The baseline is the mean of runs 1 and 4 (on a shared machine background load moves
both). ``--torch-threads`` sets torch's threads for ``nlp.pipe`` here,
``--server-torch-threads`` the server's ``--torch-threads``; ``--no-model-process``
passes the same to the server (the model on a thread of the HTTP process). The CPU time
per document of the HTTP process, of the model's process and of the clients shows where
the cores went.
The bar: server words/s >= 0.7 x ``nlp.pipe`` words/s, zero errors; printed at the end.
Take real figures on an idle machine with the trained pipeline; any small saved
pipeline checks that the script runs end to end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from machine import describe, machine

REPO = Path(__file__).resolve().parents[1]
BAR = 0.7  # the server's words/s must be at least this share of nlp.pipe's


def load_texts(args: argparse.Namespace) -> List[str]:
    """One text per line of --texts, or one per sentence (``--unit sentence``) or per
    document (``--unit document``) of the --dev corpus."""
    if args.texts is not None:
        lines = Path(args.texts).read_text(encoding="utf8").splitlines()
        texts = [line for line in lines if line.strip()]
    else:
        import spacy
        from spacy.tokens import DocBin

        docs = DocBin().from_disk(args.dev).get_docs(spacy.blank("en").vocab)
        if args.unit == "document":
            texts = [doc.text for doc in docs if doc.text.strip()]
        else:
            texts = [sent.text for doc in docs for sent in doc.sents if sent.text.strip()]
    return texts[: args.limit] if args.limit else texts


def time_pipe(nlp: Any, texts: List[str], batch_size: int, min_seconds: float) -> Dict[str, float]:
    """Pass over ``texts`` until ``min_seconds`` have gone by (at least once)."""
    docs = words = 0
    start = time.perf_counter()
    while True:
        for doc in nlp.pipe(texts, batch_size=batch_size):
            docs += 1
            words += len(doc)
        seconds = time.perf_counter() - start
        if seconds >= min_seconds:
            return {"docs_s": docs / seconds, "words_s": words / seconds, "seconds": seconds}


def start_server(args: argparse.Namespace) -> Tuple[subprocess.Popen, str, int]:
    """``spacy-lisa serve`` on a free port; returns the process, host and port."""
    cmd = [
        sys.executable, "-m", "spacy_lisa", "serve", args.model, "--port", "0",
        "--batch-size", str(args.batch_size), "--max-wait-ms", str(args.max_wait_ms),
        "--max-queue", str(max(1024, 4 * args.clients)),
    ]  # fmt: skip
    if args.server_torch_threads is not None:
        cmd += ["--torch-threads", str(args.server_torch_threads)]
    if not args.model_process:
        cmd += ["--no-model-process"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, encoding="utf8")
    assert proc.stderr is not None
    deadline = time.monotonic() + 600
    for line in proc.stderr:
        print(f"  server: {line.rstrip()}", flush=True)
        if "Serving" in line and "http://" in line:
            address = line.split("http://", 1)[1].split()[0].rstrip("/")
            host, port = address.rsplit(":", 1)
            # keep reading the server's stderr so that its pipe never fills up
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return proc, host, int(port)
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit(f"the server did not start: {' '.join(cmd)}")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


class Client(threading.Thread):
    """One client: one keep-alive connection, ``per_request`` texts per request (one by
    default), requests back to back."""

    def __init__(
        self, host: str, port: int, texts: List[str], first: int, until: float, per_request: int
    ):
        super().__init__(daemon=True)
        self.host, self.port = host, port
        self.texts, self.next, self.until = texts, first, until
        self.per_request = per_request
        self.latencies: List[float] = []
        self.docs = self.words = self.errors = 0
        self.error_samples: List[str] = []

    def run(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        headers = {"Content-Type": "application/json"}
        while time.monotonic() < self.until:
            chosen = [
                self.texts[(self.next + i) % len(self.texts)] for i in range(self.per_request)
            ]
            self.next += self.per_request
            body = json.dumps({"text": chosen[0]} if len(chosen) == 1 else {"texts": chosen})
            start = time.perf_counter()
            try:
                conn.request("POST", "/v1/annotate", body, headers)
                response = conn.getresponse()
                data = response.read()
                seconds = time.perf_counter() - start
                records = json.loads(data)["records"] if response.status == 200 else None
            except (OSError, http.client.HTTPException, ValueError, KeyError) as err:
                self._error(repr(err))
                conn.close()
                conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                continue
            if records is None:
                self._error(f"HTTP {response.status}: {data[:200]!r}")
                continue
            self.latencies.append(seconds)
            self.docs += self.per_request
            self.words += sum(len(r["tokens"]) for r in records)
        conn.close()

    def _error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what)


def quantiles(values: List[float]) -> Dict[str, float]:
    if not values:
        return {"p50_ms": float("nan"), "p99_ms": float("nan")}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": 1000 * pick(0.5), "p99_ms": 1000 * pick(0.99)}


def process_cpu_seconds(pid: int) -> Optional[float]:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CPUMeter:
    """CPU seconds used by the server's processes (the HTTP process and, when the model
    has its own, the model's) and by this one (the clients) between start and read."""

    def __init__(self, pids: Dict[str, int]) -> None:
        self.pids = pids
        self.before = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
        self.clients_before = time.process_time()

    def per_doc(self, docs: int) -> Dict[str, Optional[float]]:
        """Milliseconds per document: ``NAME_cpu_ms_per_doc`` for each process."""
        out: Dict[str, Optional[float]] = {}
        for name, pid in self.pids.items():
            now, before = process_cpu_seconds(pid), self.before[name]
            used = None if now is None or before is None else now - before
            out[f"{name}_cpu_ms_per_doc"] = None if used is None else 1000 * used / max(1, docs)
        clients = time.process_time() - self.clients_before
        out["clients_cpu_ms_per_doc"] = 1000 * clients / max(1, docs)
        return out


def server_pids(host: str, port: int, server_pid: int) -> Dict[str, int]:
    """The server's process ids from its /health: "server" (HTTP) and "model"."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/health")
    replica = json.loads(conn.getresponse().read())["replica"]
    conn.close()
    pids = {"server": server_pid}
    if replica.get("model_process"):
        pids["model"] = int(replica["model_process"]["pid"])
    return pids


def load_test(
    host: str, port: int, texts: List[str], clients: int, duration: float, per_request: int = 1
) -> Dict:
    until = time.monotonic() + duration
    step = max(1, len(texts) // clients)
    pool = [Client(host, port, texts, i * step, until, per_request) for i in range(clients)]
    start = time.perf_counter()
    for client in pool:
        client.start()
    for client in pool:
        client.join()
    seconds = time.perf_counter() - start
    latencies = [x for c in pool for x in c.latencies]
    docs, words = sum(c.docs for c in pool), sum(c.words for c in pool)
    return {
        "clients": clients,
        "seconds": seconds,
        "docs": docs,
        "docs_s": docs / seconds,
        "words_s": words / seconds,
        "errors": sum(c.errors for c in pool),
        "error_samples": [s for c in pool for s in c.error_samples][:5],
        **quantiles(latencies),
    }


def server_batches(host: str, port: int) -> Optional[float]:
    """Mean documents per batch, from the server's /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode("utf8")
    conn.close()
    values: Dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = sample.value
    count = values.get("lisa_serve_batch_docs_count", 0)
    return values["lisa_serve_batch_docs_sum"] / count if count else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="trained pipeline directory or package name")
    parser.add_argument("--texts", default=None, help="one text per line (default: --dev)")
    parser.add_argument("--dev", default=str(REPO / "corpus" / "dev.spacy"))
    parser.add_argument(
        "--unit",
        choices=("sentence", "document"),
        default="sentence",
        help="a text of --dev: one sentence, or one whole document (its raw text)",
    )
    parser.add_argument("--limit", type=int, default=2000, help="first N texts (0: all)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--texts-per-request", type=int, default=1, help="texts each request carries"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="server --batch-size (default: --clients, so a batch closes once every "
        "client's request is in rather than at --max-wait-ms)",
    )
    parser.add_argument("--max-wait-ms", type=float, default=5.0, help="server --max-wait-ms")
    parser.add_argument("--pipe-batch-size", type=int, default=64, help="nlp.pipe batch_size")
    parser.add_argument(
        "--torch-threads", type=int, default=None, help="torch threads of nlp.pipe here"
    )
    parser.add_argument(
        "--server-torch-threads",
        type=int,
        default=None,
        help="the server's --torch-threads (default: the server's own default)",
    )
    parser.add_argument(
        "--no-model-process",
        dest="model_process",
        action="store_false",
        help="serve with --no-model-process (the model on a thread of the HTTP process)",
    )
    parser.add_argument("--single", type=int, default=300, help="single-client requests")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    if args.batch_size is None:
        args.batch_size = args.clients * args.texts_per_request

    import spacy
    import torch

    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)
    texts = load_texts(args)
    print(f"{len(texts)} texts from {args.texts or args.dev}; {describe()}", flush=True)
    nlp = spacy.load(args.model)
    list(nlp.pipe(texts[:64], batch_size=args.pipe_batch_size))  # warm-up
    min_seconds = max(5.0, args.duration / 2)
    print("nlp.pipe (before)...", flush=True)
    pipe_before = time_pipe(nlp, texts, args.pipe_batch_size, min_seconds)

    proc, host, port = start_server(args)
    try:
        # warm-up: every text once, a few clients, not counted
        load_test(host, port, texts[: 4 * args.clients], min(4, args.clients), 2.0)
        print(f"{args.clients} clients for {args.duration:.0f}s...", flush=True)
        meter = CPUMeter(server_pids(host, port, proc.pid))
        loaded = load_test(host, port, texts, args.clients, args.duration, args.texts_per_request)
        loaded.update(meter.per_doc(loaded["docs"]))
        mean_batch = server_batches(host, port)
        by_length = sorted(texts, key=len)
        sentence = by_length[len(by_length) // 2]
        print(f"one client, {args.single} requests...", flush=True)
        single = load_test_single(host, port, sentence, args.single)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    print("nlp.pipe (after)...", flush=True)
    pipe_after = time_pipe(nlp, texts, args.pipe_batch_size, min_seconds)

    # the most the server's batches allow: nlp.pipe in batches no larger than the
    # documents all clients have in flight at once (one request each)
    in_flight = min(args.batch_size, args.clients * args.texts_per_request)
    print(f"nlp.pipe in batches of {in_flight}...", flush=True)
    pipe_small = time_pipe(nlp, texts, in_flight, min_seconds)

    pipe = {k: (pipe_before[k] + pipe_after[k]) / 2 for k in ("docs_s", "words_s")}
    ratio = loaded["words_s"] / pipe["words_s"]
    results = {
        "model": args.model,
        "texts": len(texts),
        "machine": machine(),
        "nlp_pipe": {"before": pipe_before, "after": pipe_after, "mean": pipe},
        "nlp_pipe_in_flight": {"batch_size": in_flight, **pipe_small},
        "server": {**loaded, "mean_batch_docs": mean_batch},
        "single": single,
        "ratio_words_s": ratio,
        "server_exit_code": code,
        "settings": {
            "torch_threads": torch.get_num_threads(),
            "server_torch_threads": args.server_torch_threads,
            "model_process": args.model_process,
            "batch_size": args.batch_size,
            "unit": args.unit,
            "texts_per_request": args.texts_per_request,
            "max_wait_ms": args.max_wait_ms,
            "pipe_batch_size": args.pipe_batch_size,
        },
    }
    print(f"\n{'run':<28} {'docs/s':>9} {'words/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, r in [
        ("nlp.pipe (before)", pipe_before),
        ("nlp.pipe (after)", pipe_after),
        (f"nlp.pipe, batches of {in_flight}", pipe_small),
        (f"server, {args.clients} clients", loaded),
        ("server, 1 client, 1 text", single),
    ]:
        p50, p99 = r.get("p50_ms"), r.get("p99_ms")
        lat = f"{p50:>8.1f} {p99:>8.1f}" if p50 is not None and p99 is not None else ""
        print(f"{name:<28} {r['docs_s']:>9.1f} {r['words_s']:>9.0f} {lat}")
    shown = f"{mean_batch:.1f}" if mean_batch is not None else "n/a"
    print(f"\nmean batch on the server: {shown} docs; errors: {loaded['errors']} (single: "
          f"{single['errors']}); server exit code after SIGTERM: {code}")  # fmt: skip
    for sample in loaded["error_samples"]:
        print(f"  error: {sample}")
    ok = ratio >= BAR and loaded["errors"] == 0 and single["errors"] == 0 and code == 0
    ceiling = pipe_small["words_s"] / pipe["words_s"]
    print(f"nlp.pipe in batches of {in_flight} (the largest the server can form) / nlp.pipe "
          f"words/s: {ceiling:.2f}")  # fmt: skip
    if loaded.get("server_cpu_ms_per_doc") is not None:
        model_cpu = loaded.get("model_cpu_ms_per_doc")
        model = "" if model_cpu is None else f", model process {model_cpu:.2f} ms"
        print(f"CPU per document under load: server (HTTP) {loaded['server_cpu_ms_per_doc']:.2f} "
              f"ms{model}, clients {loaded['clients_cpu_ms_per_doc']:.2f} ms; nlp.pipe in "
              f"batches of {in_flight}: {1000 / pipe_small['docs_s']:.2f} ms wall")  # fmt: skip
    print(f"server / nlp.pipe words/s: {ratio:.2f} (bar {BAR}) -> {'PASS' if ok else 'FAIL'}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf8")


def load_test_single(host: str, port: int, sentence: str, n: int) -> Dict:
    """One client sending the same sentence ``n`` times in a row."""
    latencies: List[float] = []
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=120)
    body = json.dumps({"text": sentence})
    words = errors = 0
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("POST", "/v1/annotate", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        latencies.append(time.perf_counter() - t0)
        if response.status != 200:
            errors += 1
            continue
        words += sum(len(r["tokens"]) for r in json.loads(data)["records"])
    conn.close()
    seconds = time.perf_counter() - start
    return {
        "requests": n,
        "docs_s": n / seconds,
        "words_s": words / seconds,
        "errors": errors,
        "words": words // max(1, n),
        **quantiles(latencies),
    }


if __name__ == "__main__":
    main()
