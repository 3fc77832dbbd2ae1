"""The seed in a failure message reproduces the failing inputs: a test's
generator depends on PACKSCAN_SEED and the test's name only, never on the
process (Python salts str hashes per process unless PYTHONHASHSEED is set)."""

import os
import subprocess
import sys


def test_case_seed_is_the_same_in_every_process():
    code = "import conftest; print(conftest.case_seed('test_where_matches_duckdb[reference-1000]'))"
    seeds = set()
    for salt in ("1", "2"):
        env = dict(os.environ, PACKSCAN_SEED="3179849946", PYTHONHASHSEED=salt)
        out = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(os.path.abspath(__file__)),
                             env=env, capture_output=True, text=True, check=True)
        seeds.add(out.stdout.strip())
    assert len(seeds) == 1, f"one test's seed differs between processes: {sorted(seeds)}"


def test_case_seed_follows_the_run_seed():
    code = "import conftest; print(conftest.case_seed('test_aggregates_match_duckdb[reference]'))"
    seeds = set()
    for run_seed in ("1", "2"):
        env = dict(os.environ, PACKSCAN_SEED=run_seed)
        out = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(os.path.abspath(__file__)),
                             env=env, capture_output=True, text=True, check=True)
        seeds.add(out.stdout.strip())
    assert len(seeds) == 2
