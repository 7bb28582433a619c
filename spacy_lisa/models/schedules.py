"""Learning-rate schedule of LISA (App. A.4; Vaswani et al. 2017).

Usage in a training config (thinc 8.3 schedules are generators the optimizer advances
once per update; the first value is used for update 1)::

    [training.optimizer]
    @optimizers = "Adam.v1"
    beta1 = 0.9
    beta2 = 0.98
    eps = 1e-12
    grad_clip = 1.0

    [training.optimizer.learn_rate]
    @schedules = "spacy-lisa.warmup_inverse_sqrt.v1"
    initial_rate = 0.04
    warmup_steps = 8000
"""

from __future__ import annotations

from typing import Iterable

from thinc.config import registry

from ..errors import Errors


@registry.schedules("spacy-lisa.warmup_inverse_sqrt.v1")
def warmup_inverse_sqrt(initial_rate: float, warmup_steps: int) -> Iterable[float]:
    """Yield lr0 * min(step^-0.5, step * warm^-1.5) for step = 1, 2, ...: a linear
    warm-up for ``warmup_steps`` steps to lr0 / sqrt(warm), then decay with the inverse
    square root of the step. The paper uses lr0 = 0.04, warm = 8000 (peak 4.5e-4)."""
    if initial_rate < 0 or warmup_steps < 1:
        raise ValueError(Errors.E160.format(initial_rate=initial_rate, warmup_steps=warmup_steps))
    return _warmup_inverse_sqrt(float(initial_rate), int(warmup_steps))


def _warmup_inverse_sqrt(initial_rate: float, warmup_steps: int) -> Iterable[float]:
    # a separate generator so that invalid arguments raise when the schedule is built,
    # not on the optimizer's first next()
    warm = warmup_steps**-1.5
    step = 1
    while True:
        yield initial_rate * min(step**-0.5, step * warm)
        step += 1
