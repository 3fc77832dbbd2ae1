"""Shared fixtures: the backends under test and a seeded RNG.

PACKSCAN_PY_BACKENDS: comma-separated backends (default "reference"; CI adds
"opencl" for the smoke tests). PACKSCAN_SEED: reproduces a run (the seed is in
every failure message)."""

import os
import random

import pytest

import packscan

SEED = int(os.environ.get("PACKSCAN_SEED", random.SystemRandom().randrange(2**32)))
BACKENDS = [b for b in os.environ.get("PACKSCAN_PY_BACKENDS", "reference").split(",") if b]


def pytest_report_header(config):
    return f"packscan {packscan.version()}, backends compiled {packscan.backends()}, testing {BACKENDS}, " \
           f"PACKSCAN_SEED={SEED}"


@pytest.fixture(params=BACKENDS)
def context(request):
    if request.param not in packscan.backends():
        pytest.skip(f"backend {request.param} not compiled in")
    ctx = packscan.Context(request.param)
    yield ctx


@pytest.fixture
def rng(request):
    seed = SEED ^ (hash(request.node.name) & 0xFFFFFFFF)
    r = random.Random(seed)
    r.seed_value = seed
    return r
