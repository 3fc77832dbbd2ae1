#!/usr/bin/env python3
"""A short text summary of Nsight Compute reports, one block per profiled
kernel launch: duration, achieved DRAM throughput (bytes / duration, and % of
peak), SM throughput, registers, launch geometry, theoretical and achieved
occupancy, and the top warp stall reasons.

    ncu --import REPORT.ncu-rep --csv --page raw --print-units base > REPORT.csv
    python3 bench/ncu_summary.py REPORT.csv [MORE.csv ...]
    python3 bench/ncu_summary.py --self-test

Reads the raw page as ncu writes it: a header row of metric names, a row of
units, then one row per launch. Metrics a report lacks print as "-". The
sections it expects (bench/ncu-query.sh asks for them): SpeedOfLight,
MemoryWorkloadAnalysis, Occupancy, LaunchStats, WarpStateStats, plus the
metrics dram__bytes_read.sum, dram__bytes_write.sum, gpu__time_duration.sum.
Python 3 standard library only."""
import csv
import io
import re
import sys

TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
        "s": 1.0}
BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6, "GB": 1e9,
         "TB": 1e12, "Kibyte": 1024.0, "Mibyte": 1024.0**2, "Gibyte": 1024.0**3}
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$")


def number(text):
    t = (text or "").strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def launches(text):
    """[(columns: {metric: (value text, unit)})] from one raw-page CSV."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if start is None:
        raise ValueError("no header row with 'Kernel Name' (is this `ncu --import ... --csv --page raw`?)")
    head = rows[start]
    body = rows[start + 1:]
    units = [""] * len(head)
    if body and not (body[0][0].strip() if body[0] else ""):  # the units row has no ID
        units = body[0] + [""] * (len(head) - len(body[0]))
        body = body[1:]
    return [{h: (r[i] if i < len(r) else "", units[i]) for i, h in enumerate(head)} for r in body]


def get(launch, metric, scale=None):
    if metric not in launch:
        return None
    text, unit = launch[metric]
    v = number(text)
    if v is None:
        return None
    if scale is not None:
        f = scale.get(unit.strip())
        if f is None and unit.strip():
            return None  # a unit this script does not know: better "-" than a wrong number
        v *= f if f is not None else 1.0
    return v


def fmt(v, spec, suffix=""):
    return "-" if v is None else format(v, spec) + suffix


def summary(launch, top=4):
    name = launch.get("Kernel Name", ("?", ""))[0]
    lid = launch.get("ID", ("?", ""))[0]
    dur = get(launch, "gpu__time_duration.sum", TIME)
    rd = get(launch, "dram__bytes_read.sum", BYTES)
    wr = get(launch, "dram__bytes_write.sum", BYTES)
    gbps = (rd + (wr or 0.0)) / dur / 1e9 if dur and rd is not None else None
    lines = [f"{name} (launch {lid})"]
    lines.append(f"  duration        {fmt(dur * 1e3 if dur is not None else None, '.4f', ' ms')}")
    lines.append(f"  DRAM            {fmt(gbps, '.1f', ' GB/s')} achieved (read {fmt(rd / 1e6 if rd is not None else None, '.1f', ' MB')}, "
                 f"written {fmt(wr / 1e6 if wr is not None else None, '.1f', ' MB')}); "
                 f"{fmt(get(launch, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'), '.1f', '%')} of peak")
    lines.append(f"  SM throughput   {fmt(get(launch, 'sm__throughput.avg.pct_of_peak_sustained_elapsed'), '.1f', '%')} of peak; "
                 f"memory {fmt(get(launch, 'gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed'), '.1f', '%')}")
    grid, block = get(launch, "launch__grid_size"), get(launch, "launch__block_size")
    lines.append(f"  launch          {fmt(grid, '.0f')} blocks x {fmt(block, '.0f')} threads, "
                 f"{fmt(get(launch, 'launch__registers_per_thread'), '.0f')} registers/thread, "
                 f"{fmt(get(launch, 'launch__shared_mem_per_block_static', BYTES), '.0f', ' B')} static shared/block, "
                 f"{fmt(get(launch, 'launch__waves_per_multiprocessor'), '.2f')} waves")
    lines.append(f"  occupancy       {fmt(get(launch, 'sm__warps_active.avg.pct_of_peak_sustained_active'), '.1f', '%')} achieved, "
                 f"{fmt(get(launch, 'sm__maximum_warps_per_active_cycle_pct'), '.1f', '%')} theoretical "
                 f"(block limit by registers {fmt(get(launch, 'launch__occupancy_limit_registers'), '.0f')}, "
                 f"shared {fmt(get(launch, 'launch__occupancy_limit_shared_mem'), '.0f')}, "
                 f"warps {fmt(get(launch, 'launch__occupancy_limit_warps'), '.0f')})")
    stalls = []
    for metric in launch:
        m = STALL.match(metric)
        v = get(launch, metric)
        if m and v is not None and not m.group(1).endswith("_not_issued"):
            stalls.append((v, m.group(1)))
    stalls.sort(reverse=True)
    cpi = get(launch, "smsp__average_warp_latency_per_inst_issued.ratio")
    if stalls:
        text = ", ".join(f"{n} {v:.2f}" for v, n in stalls[:top])
        lines.append(f"  stalls          {text} (cycles per issued instruction"
                     f"{'; all reasons ' + format(cpi, '.2f') if cpi is not None else ''})")
    else:
        lines.append("  stalls          - (no WarpStateStats metrics in the report)")
    return "\n".join(lines)


def self_test():
    """A report in the raw page's shape, as ncu writes it; fails loudly."""
    head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC", "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "launch__registers_per_thread", "launch__grid_size", "launch__block_size",
            "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
            "smsp__average_warps_issue_stalled_long_scoreboard_not_issued_per_issue_active.ratio"]
    units = ["", "", "", "", "", "", "", "", "", "", "", "Mbyte", "byte", "usecond", "%", "%", "register/thread", "",
             "", "%", "%", "", "", "", ""]
    row = ["0", "1234", "packscan_bench", "h", "query_partials", "1", "7", "(256, 1, 1)", "(528, 1, 1)", "0", "9.0",
           "750.5", "1,048,576", "1000", "17.3", "41.2", "80", "528", "256", "30.5", "37.5", "9.5", "1.25", "3.0",
           "99"]
    out = io.StringIO()
    csv.writer(out).writerows([head, units, row])
    (launch,) = launches("==PROF== Connected to process\n" + out.getvalue())
    text = summary(launch)
    want = ["query_partials (launch 0)", "1.0000 ms", "751.5 GB/s", "17.3% of peak", "41.2% of peak",
            "528 blocks x 256 threads", "80 registers/thread", "30.5% achieved, 37.5% theoretical",
            "long_scoreboard 9.50, lg_throttle 3.00, wait 1.25"]
    missing = [w for w in want if w not in text]
    if missing or "not_issued" in text:
        print(text)
        print(f"self-test FAILED: missing {missing}" if missing else "self-test FAILED: a _not_issued stall listed")
        return 1
    # a unit the script does not know prints "-", never a wrong number
    units[13] = "fortnight"
    out = io.StringIO()
    csv.writer(out).writerows([head, units, row])
    if "duration        -" not in summary(launches(out.getvalue())[0]):
        print("self-test FAILED: an unknown time unit was used")
        return 1
    try:
        launches("a,b\n1,2\n")
        print("self-test FAILED: a CSV without 'Kernel Name' was accepted")
        return 1
    except ValueError:
        pass
    print("self-test passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    status = 0
    for path in argv:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                found = launches(f.read())
        except (OSError, ValueError) as e:
            print(f"ncu_summary.py: {path}: {e}", file=sys.stderr)
            status = 2
            continue
        print(f"== {path}: {len(found)} launch(es)")
        for launch in found:
            print(summary(launch))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
