"""Shared test set-up."""

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Under pytest-xdist each worker gets one core's worth of threads: 2 workers x 2
    # torch threads on a 2-core machine would only thrash.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


def pytest_collection_modifyitems(items: list) -> None:
    # The slow tests (workflows, Ray, servers: a minute or more each, the project's smoke
    # run several) first, so that `make test`'s two workers start them together instead of
    # one worker ending the run alone on a workflow that started last; the rest, in their
    # order, fill the gaps (--dist worksteal moves queued tests to the idle worker).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def srl_model_dir(tmp_path_factory: pytest.TempPathFactory):
    """A sentencizer + tiny lisa_srl pipeline, overfit on ``srl_testing.TEXT_SENTENCES``,
    saved to disk once per test process for the tests that load it by path (the server,
    its model process, Ray Serve, the demo page). Read it; never write into it."""
    from srl_testing import TEXT_SENTENCES, TINY_MODEL, train_tiny_pipeline

    nlp = train_tiny_pipeline(TEXT_SENTENCES, TINY_MODEL, steps=30)
    path = tmp_path_factory.mktemp("srl_model") / "lisa"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="session")
def ewt_dir():
    """The real EWT data (``$SPACY_LISA_EWT_DIR``, default ``../shared/data/ewt`` beside
    the repo). Missing data skips locally but FAILS in CI (``CI=true``): the checks on
    real data must not silently stop running there."""
    from pathlib import Path

    path = Path(os.environ.get("SPACY_LISA_EWT_DIR", REPO_ROOT.parent / "shared/data/ewt"))
    if not (path / "ud").is_dir() or not (path / "propbank").is_dir():
        message = f"EWT data not found at {path} (set SPACY_LISA_EWT_DIR)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path.resolve()


SETUP_HINT = (
    "Chromium is not installed. Run the project's set-up command, `make install` (it "
    "installs the Debian packages: apt-get update && apt-get install -y chromium "
    "chromium-driver)."
)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Headless Chromium (Debian's package, as `make install` installs it) for the
    browser tests: missing, it skips locally and FAILS in CI (``CI=true``)."""
    import shutil

    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(SETUP_HINT)
        pytest.skip(SETUP_HINT)
    return path
