#!/usr/bin/env python3
"""Reference logits for a DeiT run at other input sizes than it was trained at.

Writes tests/data/vit_resolution_reference.json, read by tests/models/vit_resolution_test.cpp.
The model is DeiT-tiny (timm's deit_tiny_patch16_224 layout, written out below in plain
PyTorch so no timm is needed) with deterministic weights from a formula both sides compute
(no RNG, no weight file): the tensors in sorted key order, tensor i element k =
  scale * sin(0.001 * k * (i + 1) + i), scale 0.5 for cls_token and pos_embed, 0.1 around 1
  for LayerNorm weights (1 + 0.1 sin), 0.05 otherwise.
Its 14x14 pos_embed grid is resampled as DeiT's fine-tuning code does (main.py: the prefix
token kept, the grid reshaped to (1, C, 14, 14), F.interpolate(mode='bicubic',
align_corners=False)), and with antialias=True as timm's resample_abs_pos_embed does;
then the timm forward. Run once with Debian's python3-torch: /usr/bin/python3 scripts/...
"""
import json
import math
import os

import torch
import torch.nn.functional as F

DIM, DEPTH, HEADS, PATCH, CLASSES, EPS = 192, 12, 3, 16, 1000, 1e-6


def shapes():
    s = {"cls_token": [1, 1, DIM], "pos_embed": [1, 197, DIM],
         "patch_embed.proj.weight": [DIM, 3, PATCH, PATCH], "patch_embed.proj.bias": [DIM],
         "norm.weight": [DIM], "norm.bias": [DIM],
         "head.weight": [CLASSES, DIM], "head.bias": [CLASSES]}
    for i in range(DEPTH):
        p = f"blocks.{i}."
        s.update({p + "norm1.weight": [DIM], p + "norm1.bias": [DIM],
                  p + "attn.qkv.weight": [3 * DIM, DIM], p + "attn.qkv.bias": [3 * DIM],
                  p + "attn.proj.weight": [DIM, DIM], p + "attn.proj.bias": [DIM],
                  p + "norm2.weight": [DIM], p + "norm2.bias": [DIM],
                  p + "mlp.fc1.weight": [4 * DIM, DIM], p + "mlp.fc1.bias": [4 * DIM],
                  p + "mlp.fc2.weight": [DIM, 4 * DIM], p + "mlp.fc2.bias": [DIM]})
    return s


def formula_weights():
    w = {}
    for i, name in enumerate(sorted(shapes())):
        shape = shapes()[name]
        n = math.prod(shape)
        k = torch.arange(n, dtype=torch.float64)
        v = torch.sin(0.001 * k * (i + 1) + i)
        if name in ("cls_token", "pos_embed"):
            v = 0.5 * v
        elif "norm" in name and name.endswith("weight"):
            v = 1 + 0.1 * v
        else:
            v = 0.05 * v
        w[name] = v.to(torch.float32).reshape(shape)
    return w


def formula_image(h, w):
    k = torch.arange(3 * h * w, dtype=torch.float64)
    return torch.sin(0.01 * k).to(torch.float32).reshape(1, 3, h, w)


def resample(pos, h, w, antialias):
    grid = pos[:, 1:].reshape(1, 14, 14, DIM).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=(h // PATCH, w // PATCH), mode="bicubic",
                         align_corners=False, antialias=antialias)
    return torch.cat([pos[:, :1], grid.permute(0, 2, 3, 1).flatten(1, 2)], dim=1)


def forward(w, img, antialias):
    b = img.shape[0]
    x = F.conv2d(img, w["patch_embed.proj.weight"], w["patch_embed.proj.bias"], stride=PATCH)
    x = x.flatten(2).transpose(1, 2)
    x = torch.cat([w["cls_token"].expand(b, -1, -1), x], dim=1)
    x = x + resample(w["pos_embed"], img.shape[2], img.shape[3], antialias)
    d = DIM // HEADS
    for i in range(DEPTH):
        p = f"blocks.{i}."
        h = F.layer_norm(x, (DIM,), w[p + "norm1.weight"], w[p + "norm1.bias"], EPS)
        qkv = F.linear(h, w[p + "attn.qkv.weight"], w[p + "attn.qkv.bias"])
        q, k, v = qkv.reshape(b, -1, 3, HEADS, d).permute(2, 0, 3, 1, 4)
        a = ((q * d ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
        o = (a @ v).transpose(1, 2).reshape(b, -1, DIM)
        x = x + F.linear(o, w[p + "attn.proj.weight"], w[p + "attn.proj.bias"])
        h = F.layer_norm(x, (DIM,), w[p + "norm2.weight"], w[p + "norm2.bias"], EPS)
        h = F.gelu(F.linear(h, w[p + "mlp.fc1.weight"], w[p + "mlp.fc1.bias"]))
        x = x + F.linear(h, w[p + "mlp.fc2.weight"], w[p + "mlp.fc2.bias"])
    x = F.layer_norm(x, (DIM,), w["norm.weight"], w["norm.bias"], EPS)
    return F.linear(x[:, 0], w["head.weight"], w["head.bias"])[0]


def main():
    torch.set_num_threads(1)
    w = formula_weights()
    cases = [(224, 224, False), (384, 384, False), (224, 320, False), (384, 384, True),
             (160, 160, True)]
    out = {"model": "deit_tiny_patch16_224", "torch": torch.__version__, "cases": []}
    with torch.no_grad():
        for h, wd, aa in cases:
            logits = forward(w, formula_image(h, wd), aa)
            out["cases"].append({"height": h, "width": wd,
                                 "interpolation": "bicubic_antialias" if aa else "bicubic",
                                 "logits": [float(v) for v in logits]})
            print(h, wd, aa, float(logits.abs().max()), float(logits.std()))
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                        "vit_resolution_reference.json")
    with open(path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
