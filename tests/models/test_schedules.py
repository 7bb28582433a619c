"""spacy-lisa.warmup_inverse_sqrt.v1: values, registry, use as Adam's learn_rate."""

from itertools import islice

import pytest
from spacy.util import registry
from thinc.api import Config

from spacy_lisa.models.schedules import warmup_inverse_sqrt


def test_values():
    rates = list(islice(warmup_inverse_sqrt(0.04, 4), 16))
    # linear warm-up: lr0 * step * warm^-1.5 for step <= warm
    assert rates[0] == pytest.approx(0.04 * 1 * 4**-1.5)
    assert rates[1] == pytest.approx(0.04 * 2 * 4**-1.5)
    # peak at step = warm: lr0 / sqrt(warm)
    assert rates[3] == pytest.approx(0.04 / 2)
    assert max(rates) == rates[3]
    # then inverse square root decay
    assert rates[8] == pytest.approx(0.04 * 9**-0.5)
    assert rates[15] == pytest.approx(0.04 / 4)


def test_paper_setting_peak():
    rates = list(islice(warmup_inverse_sqrt(0.04, 8000), 8001))
    assert rates[7999] == pytest.approx(0.04 / 8000**0.5)
    assert rates[8000] < rates[7999]


def test_invalid_arguments():
    with pytest.raises(ValueError, match="E160"):
        warmup_inverse_sqrt(0.04, 0)
    with pytest.raises(ValueError, match="E160"):
        warmup_inverse_sqrt(-1.0, 10)


def test_adam_config_with_the_schedule():
    config = Config().from_str(
        """
        [optimizer]
        @optimizers = "Adam.v1"
        beta1 = 0.9
        beta2 = 0.98
        eps = 1e-12
        grad_clip = 1.0

        [optimizer.learn_rate]
        @schedules = "spacy-lisa.warmup_inverse_sqrt.v1"
        initial_rate = 0.04
        warmup_steps = 10
        """
    )
    optimizer = registry.resolve(config)["optimizer"]
    assert optimizer.learn_rate == pytest.approx(0.04 * 10**-1.5)
    for _ in range(9):
        optimizer.step_schedules()
    assert optimizer.learn_rate == pytest.approx(0.04 / 10**0.5)
    assert optimizer.grad_clip == 1.0
