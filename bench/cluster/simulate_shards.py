#!/usr/bin/env python3
"""Makes N simulated shards of a large run from one real shard, to measure `attnlab merge`
at a scale this machine cannot analyse (issue 50: 50 000 images in 128 shards).

    simulate_shards.py REAL_SHARD_DIR OUT_DIR --shards N --images-per-shard M

REAL_SHARD_DIR is a real `attnlab analyze ... --shard 0/1` or `attnlab faithfulness ...
--shard 0/1` folder over K images. Each simulated shard claims M images of a list of N*M
made-up names (its manifest's list hash is that list's, so the merge's checks run as for a
real run). An analyze shard's state does not grow with its images (running means and sums):
it keeps the real one with the counts scaled to M. A faithfulness shard holds the real
shard's per-image rows repeated to M images: what the merge reads, replays and writes has
the size a real run of N*M images would have. The statistics are then not a real run's:
this measures time and memory, not results. A `faithfulness --per-image off` shard keeps running
means only: they are kept with their counts scaled. Faithfulness shards can also pretend to score
more models (--models K: the real model's rows under K tags). Per-image array files are
not simulated (use statistics-only analyses): a merge hard-links each one, whose cost is
measured separately in docs/BENCHMARKS.md.
"""
import argparse
import copy
import hashlib
import json
import os
import shutil


def list_hash(items):
    h = hashlib.sha256()
    for item in items:
        h.update(item.encode() + b"\0")
    return h.hexdigest()


def repeat(seq, count):
    """seq repeated (and cut) to `count` elements."""
    if not seq:
        return []
    return [seq[i % len(seq)] for i in range(count)]


def analyze_body(real, images):
    session = copy.deepcopy(real["session"])
    k = max(1, real["session"]["images"])
    for t in session["tables"]:
        t["images"] = images
        for r in t["rows"]:
            r["n"] = max(1, r["n"] * images // k)
    for s in session["sums"]:
        s["count"] = images
    for s in session["spectrum_sums"]:
        s["images"] = images
    session["images"] = images
    return {"session": session}


def scaled_accumulator(acc, images, k):
    acc = copy.deepcopy(acc)
    acc["images"] = images * acc["images"] // max(1, k)
    for r in acc["rows"]:
        r["n"] = max(1, r["n"] * images // max(1, k))
    return acc


def faithfulness_body(real, images, real_images, models):
    state = copy.deepcopy(real["state"])
    if "summary" in state:  # --per-image off: running means, scaled to `images`
        base = state["models"][0]
        tags = [f"{base['model']}_{m:02d}" if models > 1 else base["model"] for m in range(models)]
        for key in ("summary", "random_summary", "curve_means"):
            acc = scaled_accumulator(state[key], images, real_images)
            rows = []
            for tag in tags:  # the real model's rows under each pretended model's tag
                for r in acc["rows"]:
                    r = copy.deepcopy(r)
                    r["key"][0] = tag
                    rows.append(r)
            acc["rows"] = rows
            state[key] = acc
        entries = []
        for tag in tags:
            e = copy.deepcopy(base)
            e["model"] = tag
            e["summary"]["model"] = tag
            entries.append(e)
        state["models"] = entries
        return {"state": state}
    out_models = []
    base = state["models"][0]
    for m in range(models):
        entry = copy.deepcopy(base)
        tag = f"{base['model']}_{m:02d}" if models > 1 else base["model"]
        entry["model"] = tag
        entry["summary"]["model"] = tag
        records = repeat(base["images"], images)
        for rec in records:
            for key in ("images", "curves", "random"):
                for row in rec[key]:
                    row[0] = tag
        entry["images"] = records
        out_models.append(entry)
    state["models"] = out_models
    return {"state": state}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("real")
    ap.add_argument("out")
    ap.add_argument("--shards", type=int, default=128)
    ap.add_argument("--images-per-shard", type=int, default=391)
    ap.add_argument("--models", type=int, default=1, help="faithfulness: models to pretend")
    a = ap.parse_args()
    with open(os.path.join(a.real, "shard.json")) as f:
        real = json.load(f)
    command = real["command"]
    real_images = real["shard"]["end"] - real["shard"]["begin"]
    total = a.shards * a.images_per_shard
    items = [f"/data/val/ILSVRC2012_val_{i:08d}.JPEG" for i in range(total)]
    digest = list_hash(items)
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.shards):
        begin, end = total * i // a.shards, total * (i + 1) // a.shards
        d = os.path.join(a.out, f"shard_{i:03d}")
        if os.path.exists(d):
            shutil.rmtree(d)
        if os.path.isdir(os.path.join(a.real, "shard_state")):
            shutil.copytree(os.path.join(a.real, "shard_state"), os.path.join(d, "shard_state"))
        else:
            os.makedirs(d)
        m = {k: v for k, v in real.items() if k not in ("session", "state", "items", "files")}
        m["list"] = {"kind": "images", "size": total, "hash": digest}
        m["shard"] = dict(real["shard"], index=i, count=a.shards, begin=begin, end=end,
                          source="simulated")
        m["items"] = items[begin:end]
        if command == "analyze":
            m.update(analyze_body(real, end - begin))
            m["files"] = []
            m["sidecar"] = dict(real["sidecar"], images=[
                {"path": p, "tag": os.path.basename(p), "status": "analysed"}
                for p in items[begin:end]])
        elif command == "faithfulness":
            m.update(faithfulness_body(real, end - begin, real_images, a.models))
        else:
            raise SystemExit(f"simulate_shards.py: {command} shards are not simulated")
        with open(os.path.join(d, "shard.json"), "w") as f:
            json.dump(m, f)
    print(f"{a.shards} simulated {command} shards of {total} images in {a.out}")


if __name__ == "__main__":
    main()
