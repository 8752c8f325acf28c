#!/usr/bin/env python3
"""Markdown table for docs/BENCHMARKS.md from bench_models' JSON output.

usage: build/bench/bench_models --benchmark_repetitions=3 \\
           --benchmark_report_aggregates_only=true \\
           --benchmark_out=models.json --benchmark_out_format=json
       python3 bench/models_table.py models.json

Per preset and batch: forward latency and peak CPU memory without trace capture (the
baseline) and with every attention layer traced, and the ratio traced / plain (medians).
"""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        mode, preset, batch = b["run_name"].split("/")[:3]
        rows.setdefault((preset, int(batch)), {})[mode] = (b["real_time"], b.get("peak_MiB"))
    print("| preset | batch | plain ms | traced ms | traced / plain | plain peak MiB | traced peak MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (preset, batch), r in rows.items():
        if "plain" not in r or "traced" not in r:
            continue
        (tp, mp), (tt, mt) = r["plain"], r["traced"]
        mem = lambda m: f"{m:.0f}" if m is not None else "–"
        print(f"| {preset} | {batch} | {tp:.1f} | {tt:.1f} | {tt / tp:.2f}× | {mem(mp)} | {mem(mt)} |")


if __name__ == "__main__":
    main()
