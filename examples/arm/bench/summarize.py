#!/usr/bin/python3
"""Summarise run.sh's results.jsonl: per setting (2 cores, 1 core) and
implementation the median and range over the rounds of the wall and CPU
milliseconds per Adam iteration, and each one's time over kinfer's."""
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
impls = []
for r in rows:
    if r["impl"] not in impls:
        impls.append(r["impl"])
print("| setting | implementation | wall ms/iteration, median [min, max] | CPU ms/iteration | rounds | wall ÷ kinfer's |")
print("|---|---|---|---|---|---|")
for setting in ("2cores", "1core"):
    ref = [r["wall_ms_per_iteration"] for r in rows if r["setting"] == setting and r["impl"] == "kinfer"]
    for impl in impls:
        rs = [r for r in rows if r["setting"] == setting and r["impl"] == impl]
        if not rs:
            continue
        w = [r["wall_ms_per_iteration"] for r in rs]
        c = [r["cpu_ms_per_iteration"] for r in rs]
        ratio = "%.1f" % (statistics.median(w) / statistics.median(ref)) if ref else ""
        print("| %s | %s | %.1f [%.1f, %.1f] | %.1f [%.1f, %.1f] | %d | %s |" % (
            setting, impl, statistics.median(w), min(w), max(w), statistics.median(c), min(c), max(c), len(rs), ratio))
