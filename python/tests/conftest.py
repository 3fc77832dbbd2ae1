"""Shared fixtures: the backends under test and a seeded RNG.

PACKSCAN_PY_BACKENDS: comma-separated backends (default "reference"; CI adds
"opencl" for the smoke tests). PACKSCAN_SEED: reproduces a run (the seed is in
every failure message)."""

import os
import random
import zlib

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


def case_seed(name):
    """The seed of one test's generator: the run's seed and the test's name.
    zlib.crc32, not hash(): Python salts str hashes per process (PYTHONHASHSEED),
    so a rerun with the printed seed would draw other inputs."""
    return SEED ^ zlib.crc32(name.encode())


@pytest.fixture
def rng(request):
    r = random.Random(case_seed(request.node.name))
    # What a failure message prints: the run's seed, which PACKSCAN_SEED takes back.
    r.seed_value = SEED
    return r
