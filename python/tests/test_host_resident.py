"""Host-resident tables: read_table(path, host_resident=True) on a Context with
a small device_memory_limit answers as the same file copied to the device
(filters, counts, row ids, gathered values, aggregates, SQL with GROUP BY),
on FOR and DELTA files; the file stays mapped until the table is closed; bad
limits are refused by name."""

import datetime
import decimal
import os

import pyarrow as pa
import pytest

import packscan

from conftest import BACKENDS

WHERES = [
    "qty < 100 AND name IN ('apple', 'cherry')",
    "price > 10.00 OR day < DATE '2021-03-01'",
    "NOT (id BETWEEN 1000 AND 20000) AND price IS NOT NULL",
    "name LIKE '%e%' AND qty >= 7",
]
STATEMENTS = [
    "SELECT name, COUNT(*), SUM(price), MIN(day), MAX(id) FROM t WHERE qty > 20 GROUP BY name",
    "SELECT qty, COUNT(*), AVG(price) FROM t GROUP BY qty",
    "SELECT SUM(price * 2 + qty), COUNT(name) FROM t WHERE NOT (id >= 25000)",
]


def random_table(rng, n):
    names = ["apple", "banana", "cherry", "date", "elder", "fig"]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),  # sorted: DELTA where asked
        "qty": pa.array([rng.randrange(256) for _ in range(n)], pa.uint8()),
        "price": pa.array([None if rng.random() < 0.1 else decimal.Decimal(rng.randrange(-5000, 100000)).scaleb(-2)
                           for _ in range(n)], pa.decimal128(12, 2)),
        "day": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i // 40) for i in range(n)],
                        pa.date32()),
        "name": [None if rng.random() < 0.05 else rng.choice(names) for _ in range(n)],
    })


def answers(t):
    out = []
    for w in WHERES:
        r = t.filter(w)
        out.append((w, t.count(w), r.row_ids().to_numpy().tolist(), pa.table(r.to_arrow()).to_pylist()))
    for s in STATEMENTS:
        out.append((s, pa.table(t.sql(s)).to_pylist()))
    out.append(("aggregate", pa.array(t.aggregate("price", WHERES[1])).to_pylist()))
    return out


def mapped(path):
    try:
        with open("/proc/self/maps") as f:
            return os.path.realpath(path) in f.read()
    except OSError:
        return None


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("encoding", ["for", "auto"])
def test_host_resident_same_answers(tmp_path, rng, backend, encoding):
    if backend not in packscan.backends():
        pytest.skip(f"backend {backend} not compiled in")
    tbl = random_table(rng, 30000)
    path = str(tmp_path / "t.pst")
    packscan.Table(tbl, backend="reference", encoding=encoding).save(path)
    plain = packscan.Context(backend)
    small = packscan.Context(backend, device_memory_limit=65536)  # chunks of a few thousand rows
    want = answers(packscan.read_table(path, context=plain))
    for ctx in (small, plain):
        t = packscan.read_table(path, context=ctx, host_resident=True)
        assert mapped(path) in (True, None), "a host-resident table's file is not mapped"
        got = answers(t)
        for w, g in zip(want, got):
            assert g == w, f"{g[0]} on {backend} ({encoding}, seed {rng.seed_value}): differs when host-resident"
        t.close()
        assert mapped(path) in (False, None), "the file is still mapped after close"


@pytest.mark.parametrize("backend", BACKENDS)
def test_device_memory_limit_refused(backend):
    if backend not in packscan.backends():
        pytest.skip(f"backend {backend} not compiled in")
    with pytest.raises(packscan.PackscanError, match=r"device_memory_limit is 1000"):
        packscan.Context(backend, device_memory_limit=1000)
    for bad in (-1, "64K", 1.5, True, 2**64):
        with pytest.raises(ValueError, match="device_memory_limit"):
            packscan.Context(backend, device_memory_limit=bad)
    packscan.Context(backend, device_memory_limit=65536).close()
