#!/usr/bin/env python3
"""report_targets.py RUNNER WORKDIR — issue 17's rows of bench/run's targets table, computed from
results written here by hand: each row must show the worst case, the verdict and the detail that
these numbers call for. The results go through the runner's --replot, the path every report takes
(summary over rounds, then the tables), so a row that reads the wrong benchmark, size, metric or
direction fails here. Exits 0 when every row matches, 1 with the differences."""
import csv
import json
import os
import re
import subprocess
import sys

runner, work = sys.argv[1], sys.argv[2]
out = os.path.join(work, "report-targets")
os.makedirs(out, exist_ok=True)

rows = []


def put(config, np, bench, size, metric, *values):
    """One value per round (round 0, 1, ...)."""
    for rnd, v in enumerate(values):
        rows.append([rnd, config, np, bench, size, metric, v])


# Collectives: 4 ranks, allreduce 8 B twice the best peer (Open MPI), 1 KiB even with it;
# 8 ranks, everything at half the best peer; 16 ranks not run.
put("manifold-shm", 4, "allreduce", 8, "latency_us", 2.0)
put("openmpi-shm", 4, "allreduce", 8, "latency_us", 1.0)
put("mpich-shm", 4, "allreduce", 8, "latency_us", 4.0)
put("manifold-shm", 4, "allreduce", 1024, "latency_us", 3.0)
put("mpich-shm", 4, "allreduce", 1024, "latency_us", 3.0)
for op, v in (("barrier", 1.0), ("bcast", 2.0), ("alltoall", 100.0)):
    put("manifold-shm", 8, op, 64, "latency_us", v / 2)
    put("openmpi-shm", 8, op, 64, "latency_us", v)
# shm bibw: below 32 KiB (not counted) far behind; from 32 KiB ahead except 1 MiB (0.9x).
put("manifold-shm", 2, "bibw", 16384, "bandwidth_MBps", 100.0)
put("mpich-shm", 2, "bibw", 16384, "bandwidth_MBps", 1000.0)
put("manifold-shm", 2, "bibw", 32768, "bandwidth_MBps", 12000.0)
put("openmpi-shm", 2, "bibw", 32768, "bandwidth_MBps", 10000.0)
put("manifold-shm", 2, "bibw", 1 << 20, "bandwidth_MBps", 9000.0)
put("openmpi-shm", 2, "bibw", 1 << 20, "bandwidth_MBps", 10000.0)
# Strided: over shm the vector type beats hand packing (0.8x), over tcp it loses at 16 B.
put("manifold-shm", 2, "strided.vector", 16, "latency_us", 0.8)
put("manifold-shm", 2, "strided.pack", 16, "latency_us", 1.0)
put("manifold-tcp", 2, "strided.vector", 16, "latency_us", 6.6)
put("manifold-tcp", 2, "strided.pack", 16, "latency_us", 6.0)
put("manifold-tcp", 2, "strided.vector", 1024, "latency_us", 6.0)
put("manifold-tcp", 2, "strided.pack", 1024, "latency_us", 6.0)
# tcp: 1.2x the raw socket at 8 B (met at 1.25, the best of two rounds counts); bibw 64 B behind
# MPICH; stream 2 MiB ahead, 4 MiB behind Open MPI (the best peer there).
put("manifold-tcp", 2, "pingpong", 8, "latency_us", 6.5, 6.0)
put("raw-tcp", 2, "pingpong", 8, "latency_us", 5.0)
put("manifold-tcp", 2, "bibw", 64, "bandwidth_MBps", 24.0)
put("mpich-tcp", 2, "bibw", 64, "bandwidth_MBps", 25.0)
put("manifold-tcp", 2, "bibw", 4096, "bandwidth_MBps", 1.0)  # above 2 KiB: not counted
put("openmpi-tcp", 2, "bibw", 4096, "bandwidth_MBps", 2.0)
put("manifold-tcp", 2, "stream", 2 << 20, "bandwidth_MBps", 6000.0)
put("mpich-tcp", 2, "stream", 2 << 20, "bandwidth_MBps", 5000.0)
put("manifold-tcp", 2, "stream", 4 << 20, "bandwidth_MBps", 6000.0)
put("openmpi-tcp", 2, "stream", 4 << 20, "bandwidth_MBps", 6600.0)
put("mpich-tcp", 2, "stream", 4 << 20, "bandwidth_MBps", 6500.0)
# Memory: at 128 ranks after the alltoall 1.5x the best peer (MPICH); elsewhere well below.
for np, init, a2a, ompi, mpich in ((64, 4000, 5000, 17000, 17300),
                                   (128, 4100, 27450, 21200, 18300)):
    put("manifold-shm", np, "memory", np, "rss_init_max_kB", init)
    put("manifold-shm", np, "memory", np, "rss_alltoall_max_kB", a2a)
    for cfg, v in (("openmpi-shm", ompi), ("mpich-shm", mpich)):
        put(cfg, np, "memory", np, "rss_init_max_kB", v)
        put(cfg, np, "memory", np, "rss_alltoall_max_kB", v)
# Spread over 3 rounds: shm 8 B latency 1.2x (missed even with fewer than 20 runs), 1 MiB
# ping-pong 1.1x; tcp 1.05x (within, but 3 runs do not decide a 20-run target).
put("manifold-shm", 2, "pingpong", 8, "latency_us", 0.10, 0.12, 0.11)
put("manifold-shm", 2, "pingpong", 1 << 20, "bandwidth_MBps", 10000.0, 11000.0, 10500.0)
put("manifold-tcp", 2, "stream", 8, "bandwidth_MBps", 2.0, 2.1, 2.05)

meta = {"command": "report_targets.py", "mode": "full", "runs": 0, "date": "-", "elapsed": 0.0,
        "load_before": 0.0, "load_after": 0.0, "load_max": 0.0, "versions": {},
        "machine": {"cores": "2", "kernel": "-"}, "failures": [], "notes": []}


def targets():
    """Writes rows and meta as a run would, replots, and returns the targets table's rows as
    {target: [measured, verdict, detail]}."""
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "config", "np", "benchmark", "size", "metric", "value"])
        w.writerows(rows)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)
    subprocess.run([sys.executable, runner, "--replot", out, "--no-plots"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
    table = text.split("## Targets", 1)[1].split("## ", 1)[0]
    got = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("target", "---"):
            got[cells[0]] = cells[1:]
    return got


# target -> (measured, verdict, regex the detail must match)
want = {
    "collectives, 4 ranks (oversubscribed: 2 cores): ≤ 1.0× best peer (worst op/size)":
        ("2.00× at 8 B", "**missed**", r"^Manifold 2\.00 vs openmpi-shm allreduce 1\.00$"),
    "collectives, 8 ranks (oversubscribed: 2 cores): ≤ 1.0× best peer (worst op/size)":
        ("0.500× at 64 B", "**met**", r"vs openmpi-shm"),
    "collectives, 16 ranks (oversubscribed: 2 cores): ≤ 1.0× best peer (worst op/size)":
        ("–", "n/a", r"^not measured$"),
    # (2.0 * 1.0 * 0.5^3)^(1/5)
    "… geometric mean over all of them ≤ 0.7×": ("0.758×", "**missed**", r"^5 measurements"),
    "shm bibw ≥ 1.0× best peer from 32 KiB":
        ("0.900× at 1 MiB", "**missed**", r"^Manifold 9000 vs openmpi-shm 10000$"),
    "shm strided vector ≥ 1.0× hand packing (latency ≤ 1.0×)":
        ("0.800× at 16 B", "**met**", r"^Manifold 0\.800 vs hand packing 1\.00$"),
    "tcp strided vector ≥ 1.0× hand packing (latency ≤ 1.0×)":
        ("1.10× at 16 B", "**missed**", r"^Manifold 6\.60 vs hand packing 6\.00$"),
    "tcp latency 1–64 B ≤ 1.25× raw socket":
        ("1.20× at 8 B", "**met**", r"^Manifold 6\.00 vs raw-tcp 5\.00$"),
    "tcp bibw 1 B–2 KiB ≥ 1.0× best peer":
        ("0.960× at 64 B", "**missed**", r"^Manifold 24\.0 vs mpich-tcp 25\.0$"),
    "tcp stream 2–4 MiB ≥ 1.0× best peer":
        ("0.909× at 4 MiB", "**missed**", r"^Manifold 6000 vs openmpi-tcp 6600$"),
    "resident memory of the largest rank, 64 and 128 local ranks ≤ 1.2× best peer":
        ("1.50× at 128 ranks", "**missed**",
         r"^Manifold 27450 vs mpich-shm after an alltoall 18300$"),
    "128 local ranks start": ("yes", "**met**", r"^largest rank 4100 kB after MPI_Init$"),
    "shm run-to-run spread ≤ 1.15× (slowest / fastest run; 20 runs)":
        ("1.20× at pingpong 8 B latency", "**missed**", r"^over 3 runs, the target counts 20"),
    "tcp run-to-run spread ≤ 1.15× (slowest / fastest run; 20 runs)":
        ("1.05× at stream 8 B bandwidth", "n/a", r"^over 3 runs, the target counts 20"),
}


def check(got, want):
    bad = []
    for target, (measured, verdict, detail) in want.items():
        row = got.get(target)
        if row is None:
            bad.append("missing row: %s" % target)
        elif row[0] != measured or row[1] != verdict or not re.search(detail, row[2]):
            bad.append("%s\n    got  %s\n    want %s, %s, /%s/" % (target, row, measured, verdict,
                                                                  detail))
    return bad


bad = check(targets(), want)
# A 128-rank run that failed is a missed start, with the failure's reason; 64 ranks still count.
rows = [r for r in rows if not (r[1] == "manifold-shm" and r[2] == 128)]
meta["failures"] = [["memory128", "manifold-shm", "timeout", "local rank 0 did not create it"]]
bad += check(targets(), {
    "128 local ranks start": ("no", "**missed**", r"^timeout: local rank 0 did not create it$"),
    "resident memory of the largest rank, 64 and 128 local ranks ≤ 1.2× best peer":
        ("0.294× at 64 ranks", "**met**", r"^Manifold 5000 vs openmpi-shm after an alltoall"),
})
if bad:
    print("report targets differ:\n" + "\n".join(bad))
    sys.exit(1)
print("report targets ok: %d rows checked" % (len(want) + 2))
