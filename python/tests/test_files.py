"""The command line's table files: Table.save, `python -m packscan encode`
of Parquet / Feather / CSV, and `packscan encode data.parquet` (the C
command hands Parquet to the Python package); the files are read back by
`packscan query` (PACKSCAN_CLI, or build/tools/packscan of the checkout)."""

import datetime
import decimal
import os
import random
import stat
import subprocess
import sys

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import packscan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("PACKSCAN_CLI") or os.path.join(ROOT, "build", "tools", "packscan")


def table():
    return pa.table({
        "id": pa.array(range(8), pa.int64()),
        "price": pa.array([None if x is None else decimal.Decimal(x).scaleb(-2)
                           for x in [100, 250, None, 999, 5, 0, 123456, -75]], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2024, 1, i + 1) for i in range(8)], pa.date32()),
        "name": ["a", "bb", None, "a", "c", "d", "a", "bb"],
        "qty": pa.array([3, 1, 4, 1, 5, 9, 2, 6], pa.uint8()),
    })


WHERE = "price > 1.00 AND day >= DATE '2024-01-02' AND name IN ('a', 'bb')"


def cli_ids(path, where):
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"the packscan command is not at {CLI}: build it (bash ci/build.sh) or set PACKSCAN_CLI")
    out = subprocess.run([CLI, "query", path, where, "--select", "id"], check=True, capture_output=True,
                         text=True).stdout.split()
    return [int(x) for x in out[1:]]


def test_save_then_query(tmp_path):
    t = packscan.Table(table(), backend="reference")
    path = str(tmp_path / "t.pst")
    t.save(path)
    want = t.filter(WHERE).row_ids().to_numpy().tolist()
    assert want == [1, 3, 6]
    assert cli_ids(path, WHERE) == want
    assert cli_ids(path, "qty BETWEEN 2 AND 5 AND name IS NOT NULL") == t.filter(
        "qty BETWEEN 2 AND 5 AND name IS NOT NULL").row_ids().to_numpy().tolist()


@pytest.mark.parametrize("fmt", ["parquet", "feather", "csv"])
def test_python_m_packscan_encode(tmp_path, fmt):
    src = str(tmp_path / f"t.{fmt}")
    tbl = table()
    if fmt == "parquet":
        pq.write_table(tbl, src)
    elif fmt == "feather":
        feather.write_feather(tbl, src)
    else:
        pcsv.write_csv(tbl.select(["id", "name", "qty"]), src)
    dst = str(tmp_path / "t.pst")
    subprocess.run([sys.executable, "-m", "packscan", "encode", src, dst], check=True, capture_output=True)
    where = WHERE if fmt != "csv" else "name = 'a' AND qty > 1"
    want = [1, 3, 6] if fmt != "csv" else [0, 6]
    assert cli_ids(dst, where) == want


def test_cli_encode_parquet(tmp_path):
    src, dst = str(tmp_path / "t.parquet"), str(tmp_path / "t.pst")
    pq.write_table(table(), src)
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"the packscan command is not at {CLI}: build it (bash ci/build.sh) or set PACKSCAN_CLI")
    subprocess.run([CLI, "encode", src, dst], check=True, capture_output=True, env={**os.environ,
                                                                                    "PYTHON": sys.executable})
    assert cli_ids(dst, WHERE) == [1, 3, 6]


def test_read_table(tmp_path):
    """A saved table, or one the CLI encoded from CSV, opens as a Table that
    answers as the original and exports the same values."""
    tbl = table()
    t = packscan.Table(tbl, backend="reference")
    path = str(tmp_path / "t.pst")
    t.save(path)
    back = packscan.read_table(path, backend="reference")
    assert back.schema == [("id", "l"), ("price", "d:18,2"), ("day", "tdD"), ("name", "u"), ("qty", "C")]
    assert back.filter(WHERE).row_ids().to_numpy().tolist() == [1, 3, 6]
    got = pa.table(back.to_arrow())
    assert got.cast(tbl.schema).equals(tbl)
    csv = tmp_path / "c.csv"
    csv.write_text("k,v,d\n1,2.50,2024-01-01\n2,,2024-02-01\n3,-1.25,\n")
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"the packscan command is not at {CLI}: build it (bash ci/build.sh) or set PACKSCAN_CLI")
    subprocess.run([CLI, "encode", "-q", str(csv), str(tmp_path / "c.pst")], check=True)
    c = packscan.read_table(str(tmp_path / "c.pst"), backend="reference")
    assert pa.table(c.to_arrow()).to_pylist() == [
        {"k": 1, "v": decimal.Decimal("2.50"), "d": datetime.date(2024, 1, 1)},
        {"k": 2, "v": None, "d": datetime.date(2024, 2, 1)},
        {"k": 3, "v": decimal.Decimal("-1.25"), "d": None}]
    with pytest.raises(packscan.PackscanError):
        packscan.read_table(str(csv))


def test_save_errors(tmp_path):
    t = packscan.Table(table(), backend="reference")
    with pytest.raises(packscan.PackscanError, match="no_such_dir"):
        t.save(str(tmp_path / "no_such_dir" / "t.pst"))
    unnamed = packscan.Table(pa.array([1, 2]), backend="reference")
    with pytest.raises(packscan.PackscanError, match="name"):
        unnamed.save(str(tmp_path / "u.pst"))


# The command line's rule for outputs (tools/outfile.h), which Table.save and
# `python -m packscan encode` share.

def write_input(path, ext):
    if ext == "parquet":
        pq.write_table(table(), path)
    else:
        feather.write_feather(table(), path)


def encode(*args, **kw):
    return subprocess.run([sys.executable, "-m", "packscan", "encode", *args], capture_output=True, **kw)


@pytest.mark.parametrize("ext", ["parquet", "feather", "arrow"])
def test_encode_refuses_its_input(tmp_path, ext):
    src = str(tmp_path / f"d.{ext}")
    write_input(src, ext)
    before = open(src, "rb").read()
    link = str(tmp_path / f"link.{ext}")
    os.symlink(src, link)
    hard = str(tmp_path / f"hard.{ext}")
    os.link(src, hard)
    for inp, out in [(src, src), (src, link), (link, src), (hard, src)]:
        r = encode(inp, out)
        assert r.returncode == 1, (inp, out, r.stderr)
        assert f"the output {out} is the input {inp} (the same file); nothing was written" in r.stderr.decode()
        assert open(src, "rb").read() == before, (inp, out)
    assert os.path.islink(link)
    # The command line refuses it before Python runs.
    r = subprocess.run([CLI, "encode", src, link], capture_output=True, env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 1 and b"is the input" in r.stderr
    assert open(src, "rb").read() == before


def reference_bytes(tmp_path):
    path = str(tmp_path / "reference.pst")
    packscan.Table(table(), backend="reference").save(path)
    return open(path, "rb").read()


def test_encode_to_standard_output(tmp_path):
    src = str(tmp_path / "d.parquet")
    write_input(src, "parquet")
    want = reference_bytes(tmp_path)
    # A private link to the standard output first: a build that renames over
    # the output replaces this link, not /dev/stdout.
    link = str(tmp_path / "stdout.lnk")
    os.symlink("/proc/self/fd/1", link)
    r = encode(src, link)
    assert os.path.islink(link), "the link to the standard output was replaced"
    assert r.returncode == 0, r.stderr
    assert r.stdout == want, "the pipe did not get exactly the table"
    assert b"8 rows" in r.stderr, "the summary belongs on stderr"
    r = encode(src, "/dev/stdout")
    assert r.returncode == 0 and r.stdout == want
    assert os.path.islink("/dev/stdout")


def test_save_to_fifo(tmp_path):
    want = reference_bytes(tmp_path)
    fifo = str(tmp_path / "out.fifo")
    os.mkfifo(fifo)
    got = tmp_path / "got.pst"
    with open(got, "wb") as sink:
        reader = subprocess.Popen(["cat", fifo], stdout=sink)
        try:
            packscan.Table(table(), backend="reference").save(fifo)
            kept = stat.S_ISFIFO(os.lstat(fifo).st_mode)
        finally:
            if reader.poll() is None and not stat.S_ISFIFO(os.lstat(fifo).st_mode):
                reader.kill()  # its FIFO was replaced: nothing will ever be written to it
            reader.wait(timeout=30)
    assert kept, "the FIFO was replaced"
    assert got.read_bytes() == want


def test_save_refuses_dangling_symlink(tmp_path):
    link = tmp_path / "t.pst"
    os.symlink("missing.pst", link)
    with pytest.raises(packscan.PackscanError, match="symbolic link to a file that does not exist"):
        packscan.Table(table(), backend="reference").save(str(link))
    assert os.path.islink(link)
    assert not (tmp_path / "missing.pst").exists()


def test_save_keeps_mode(tmp_path):
    t = packscan.Table(table(), backend="reference")
    path = str(tmp_path / "t.pst")
    t.save(path)
    old = os.umask(0o077)
    try:
        for mode in (0o600, 0o640, 0o604):
            os.chmod(path, mode)
            t.save(path)
            assert stat.S_IMODE(os.stat(path).st_mode) == mode
        os.umask(0o027)
        t.save(str(tmp_path / "new.pst"))
        assert stat.S_IMODE(os.stat(tmp_path / "new.pst").st_mode) == 0o640
    finally:
        os.umask(old)


def test_zone_maps(tmp_path):
    """Import gives every column zone maps, a saved table keeps them, and a
    query on date-ordered data answers as on the same rows shuffled."""
    n = 50000
    days = pa.array(sorted(datetime.date(2020, 1, 1) + datetime.timedelta(days=i * 1000 // n) for i in range(n)))
    vals = pa.array([(i * 7919) % 1000 for i in range(n)], pa.int64())
    tbl = pa.table({"day": days, "v": vals})
    t = packscan.Table(tbl, backend="reference")
    assert t.has_zone_maps and t.zone_maps == {"day": True, "v": True}
    path = str(tmp_path / "z.pst")
    t.save(path)
    back = packscan.read_table(path, backend="reference")
    assert back.has_zone_maps
    where = "day BETWEEN DATE '2020-03-01' AND DATE '2020-03-10' AND v < 500"
    order = list(range(n))
    random.Random(7).shuffle(order)
    shuffled = packscan.Table(tbl.take(pa.array(order)), backend="reference")
    query = f"SELECT COUNT(*) AS n, SUM(v) AS s FROM t WHERE {where}"
    want = shuffled.sql(query).to_pyarrow().to_pylist()
    assert want[0]["n"] > 0
    assert back.sql(query).to_pyarrow().to_pylist() == want
    assert t.sql(query).to_pyarrow().to_pylist() == want


def test_delta_encoding(tmp_path):
    """Table(encoding=...): sorted columns stored as DELTA filter as FOR
    does, and a saved DELTA table (file version 1.2 or later) reads back the same."""
    n = 3000
    tbl = pa.table({"ts": pa.array([1700000000 + 2 * i + i % 3 for i in range(n)], pa.int64()),
                    "v": pa.array([i % 5 for i in range(n)], pa.int64())})
    where = "ts < 1700002000 AND v = 2"
    want = packscan.Table(tbl, backend="reference").filter(where).row_ids().to_numpy().tolist()
    assert len(want) > 0
    for enc in ("delta", "auto"):
        t = packscan.Table(tbl, backend="reference", encoding=enc)
        assert t.filter(where).row_ids().to_numpy().tolist() == want
        path = str(tmp_path / f"{enc}.pst")
        t.save(path)
        with open(path, "rb") as f:
            assert f.read(12)[10] >= 2
        back = packscan.read_table(path, backend="reference")
        assert back.filter(where).row_ids().to_numpy().tolist() == want
    with pytest.raises(ValueError):
        packscan.Table(tbl, encoding="rle")
