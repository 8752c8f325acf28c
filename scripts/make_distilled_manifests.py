#!/usr/bin/env python3
"""Writes tests/data/manifests/deit_{tiny,small,base}_distilled_patch16_224.json.

timm cannot be installed on the project's machines (no PyPI), so the state-dict layout of
timm's VisionTransformerDistilled (timm/models/deit.py) is written from the DeiT manifests
in ../shared/fixtures/manifests with the three changes that class makes to the
VisionTransformer it extends:
  - `dist_token` (1, 1, C), registered after `pos_embed` (so it follows it in the state dict);
  - `pos_embed` re-created with two prefix tokens: (1, N + 2, C);
  - `head_dist` Linear(C, num_classes), registered after `head`.
Run once from the repository root: python3 scripts/make_distilled_manifests.py
"""
import json
import os

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures", "manifests")
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "manifests")


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def distilled(size):
    src = json.load(open(os.path.join(SHARED, f"deit_{size}_patch16_224.json")))
    dim = src["meta"]["embed_dim"]
    tensors = []
    for name, shape, dtype in src["tensors"]:
        if name == "pos_embed":
            shape = [1, shape[1] + 1, dim]
        tensors.append([name, shape, dtype])
        if name == "pos_embed":
            tensors.append(["dist_token", [1, 1, dim], dtype])
    classes = dict((n, s) for n, s, _ in tensors)["head.weight"][0]
    tensors += [["head_dist.weight", [classes, dim], "float32"],
                ["head_dist.bias", [classes], "float32"]]
    meta = dict(src["meta"])
    meta["source"] = "timm VisionTransformerDistilled, written from the DeiT manifest " \
                     "(scripts/make_distilled_manifests.py)"
    return {"model": f"deit_{size}_distilled_patch16_224", "meta": meta,
            "num_params": sum(numel(s) for _, s, _ in tensors), "tensors": tensors}


def main():
    os.makedirs(OUT, exist_ok=True)
    for size in ("tiny", "small", "base"):
        m = distilled(size)
        with open(os.path.join(OUT, m["model"] + ".json"), "w") as f:
            f.write("{\n")
            f.write(f'  "model": {json.dumps(m["model"])},\n')
            f.write(f'  "meta": {json.dumps(m["meta"])},\n')
            f.write(f'  "num_params": {m["num_params"]},\n')
            f.write('  "tensors": [\n')
            f.write(",\n".join("    " + json.dumps(t) for t in m["tensors"]))
            f.write("\n  ]\n}\n")
        print(m["model"], m["num_params"])


if __name__ == "__main__":
    main()
