#!/usr/bin/env python3
"""Markdown tables for docs/BENCHMARKS.md from bench_attention's JSON output.

usage: build/bench/bench_attention --benchmark_repetitions=3 \
           --benchmark_report_aggregates_only=true \
           --benchmark_out=att.json --benchmark_out_format=json
       python3 bench/attention_table.py att.json

Forward latency and peak memory per mechanism and N, each with its ratio to softmax at
the same N (same run); the growth factor from one N to the next (4× tokens each step:
~4 means linear, ~16 quadratic); and the row-query latency. With repetitions, the medians are used.
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        data = json.load(f)
    fwd, peak, row = defaultdict(dict), defaultdict(dict), defaultdict(dict)
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        kind, mech, n = b["run_name"].split("/")[:3]
        n = int(n)
        if kind == "forward":
            fwd[mech][n] = b["real_time"]  # ms
            if "peak_MiB" in b:
                peak[mech][n] = b["peak_MiB"]
        else:
            row[mech][n] = b["real_time"]  # µs
    return data.get("context", {}), fwd, peak, row


def main():
    context, fwd, peak, row = load(sys.argv[1])
    ns = sorted({n for m in fwd.values() for n in m})
    mechs = list(fwd)
    print(f"host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs, "
          f"date {context.get('date', '?')}\n")
    print("Forward latency, ms (× softmax at the same N):\n")
    print("| mechanism | " + " | ".join(f"N={n}" for n in ns) + " | growth per 4× N |")
    print("| --- |" + " --- |" * (len(ns) + 1))
    for m in mechs:
        cells = []
        for n in ns:
            t, base = fwd[m].get(n), fwd.get("softmax", {}).get(n)
            cells.append(f"{t:.2f} ({t / base:.2f}×)" if t and base else (f"{t:.2f}" if t else "–"))
        growth = [fwd[m][b] / fwd[m][a] for a, b in zip(ns, ns[1:]) if a in fwd[m] and b in fwd[m]]
        print(f"| {m} | " + " | ".join(cells) + " | " + ", ".join(f"{g:.1f}" for g in growth) + " |")
    if peak:
        print("\nPeak CPU memory allocated by one forward, MiB (× softmax):\n")
        print("| mechanism | " + " | ".join(f"N={n}" for n in ns) + " |")
        print("| --- |" + " --- |" * len(ns))
        for m in mechs:
            cells = []
            for n in ns:
                p, base = peak[m].get(n), peak.get("softmax", {}).get(n)
                cells.append(f"{p:.1f} ({p / base:.2f}×)" if p is not None and base else "–")
            print(f"| {m} | " + " | ".join(cells) + " |")
    print("\nOne implicit-attention row (centre query, head 0), µs:\n")
    print("| mechanism | " + " | ".join(f"N={n}" for n in ns) + " |")
    print("| --- |" + " --- |" * len(ns))
    for m in row:
        print(f"| {m} | " + " | ".join(f"{row[m][n]:.0f}" if n in row[m] else "–" for n in ns) + " |")


if __name__ == "__main__":
    main()
