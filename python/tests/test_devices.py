"""A Context over several devices (devices=[...]): tables split by rows
across them answer as on one device (filters, counts, row ids, gathered
values, aggregates, SQL with GROUP BY), device-resident and host-resident;
bad device lists are refused. Two contexts of device 0 (devices=[0, 0]) run
on any machine; 100,000 rows put a part on each."""

import pyarrow as pa
import pytest

import packscan

from conftest import BACKENDS
from test_host_resident import answers, random_table


@pytest.mark.parametrize("backend", BACKENDS)
def test_devices_same_answers(tmp_path, rng, backend):
    if backend not in packscan.backends():
        pytest.skip(f"backend {backend} not compiled in")
    tbl = random_table(rng, 100000)
    path = str(tmp_path / "t.pst")
    packscan.Table(tbl, backend="reference", encoding="auto").save(path)
    want = answers(packscan.read_table(path, context=packscan.Context(backend)))
    two = packscan.Context(backend, devices=[0, 0])
    assert " + " in two.device
    for host in (False, True):
        t = packscan.read_table(path, context=two, host_resident=host)
        got = answers(t)
        for w, g in zip(want, got):
            assert g == w, f"{g[0]} on {backend} over two devices (host_resident={host}, seed {rng.seed_value})"
        t.close()
    t = packscan.Table(tbl, context=two)  # from Arrow: split as it is encoded
    got = answers(t)
    for w, g in zip(want, got):
        assert g == w, f"{g[0]} on {backend} over two devices, from Arrow (seed {rng.seed_value})"


@pytest.mark.parametrize("backend", BACKENDS)
def test_devices_refused(backend):
    if backend not in packscan.backends():
        pytest.skip(f"backend {backend} not compiled in")
    for bad in ([], [-1], ["0"], [True], 5):
        with pytest.raises((ValueError, TypeError), match="devices|iterable"):
            packscan.Context(backend, devices=bad)
    with pytest.raises(ValueError, match="devices"):
        packscan.Context(backend, device=0, devices=[0, 1])
    with pytest.raises(packscan.PackscanError, match="device_count is 17"):
        packscan.Context(backend, devices=[0] * 17)
    one = packscan.Context(backend, devices=[0])  # one device: an ordinary context
    assert " + " not in one.device
    one.close()


def test_opencl_platform():
    """opencl_platform: an index or a part of the platform's name; bad
    values are refused by name, a name no platform has by the library, which
    lists the installed ones."""
    for bad in ("", -1, True, 1.5, b"x"):
        with pytest.raises(ValueError, match="opencl_platform"):
            packscan.Context("reference", opencl_platform=bad)
    if "opencl" not in packscan.backends():
        pytest.skip("OpenCL not compiled in")
    with pytest.raises(packscan.PackscanError, match="zz-no-such-platform.*installed: 0: "):
        packscan.Context("opencl", opencl_platform="zz-no-such-platform")
    ctx = packscan.Context("opencl")
    platform = ctx.device.split(":")[0]
    ctx.close()
    by_name = packscan.Context("opencl", opencl_platform=platform[:6].swapcase())
    assert by_name.device.startswith(platform + ":")
    by_name.close()
