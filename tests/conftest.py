"""Shared test set-up."""

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Under pytest-xdist each worker gets one core's worth of threads: 2 workers x 2
    # torch threads on a 2-core machine would only thrash.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)
