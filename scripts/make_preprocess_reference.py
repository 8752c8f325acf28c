#!/usr/bin/env python3
"""Reference evaluation preprocessing: what PIL + torchvision give for a committed photo.

Writes tests/data/preprocess_reference.npz (the normalised tensors) and
tests/data/preprocess_reference.json (the cases: photo, pipeline, array name, versions),
read by tests/core/preprocess_reference_test.cpp, which runs image::preprocess with the
presets' preprocessing on the same photo and compares.

The pipelines are the papers' evaluation transforms, written with torchvision exactly as
their code builds them for a 224 input:
  DeiT (timm, crop_pct 0.9):  Resize(int(224 / 0.9) = 248, bicubic), CenterCrop(224),
                              ToTensor(), Normalize(ImageNet mean, std)
  LITv2 / RAVLT (crop_pct 0.875): Resize(256, bicubic), CenterCrop(224), ToTensor(),
                              Normalize(ImageNet mean, std)
On a PIL image torchvision's Resize calls PIL's Image.resize, which antialiases when it
downscales.

The .npz is a zip of deflated .npy entries (written here with zipfile.writestr, so every
entry's sizes are in its local header; numpy.load reads it as an ordinary .npz). Each
array is float32 (1, 3, 224, 224), the layout attnlab's preprocess returns.

Run with Debian's Python (python3-torch 1.13, python3-torchvision 0.14, python3-pil 9.4):
    /usr/bin/python3 scripts/make_preprocess_reference.py
"""
import hashlib
import io
import json
import os
import zipfile

import numpy as np
import PIL
import torch
import torchvision
from PIL import Image
from torchvision import transforms as T

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PHOTO = "assets/photos/chelsea.png"  # 451 x 300 RGB: both pipelines downscale it
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
CASES = [
    {"name": "deit", "resize": 248, "crop": 224, "presets": ["deit_small_patch16_224"]},
    {"name": "litv2_ravlt", "resize": 256, "crop": 224, "presets": ["litv2_s", "ravlt_s"]},
]


def pipeline(resize, crop):
    return T.Compose([
        T.Resize(resize, interpolation=T.InterpolationMode.BICUBIC),
        T.CenterCrop(crop),
        T.ToTensor(),
        T.Normalize(MEAN, STD),
    ])


def npy_bytes(array):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def main():
    path = os.path.join(ROOT, PHOTO)
    with open(path, "rb") as f:
        photo_bytes = f.read()
    image = Image.open(io.BytesIO(photo_bytes)).convert("RGB")
    cases = []
    arrays = {}
    for case in CASES:
        x = pipeline(case["resize"], case["crop"])(image).unsqueeze(0)
        assert x.dtype == torch.float32 and tuple(x.shape) == (1, 3, case["crop"], case["crop"])
        arrays[case["name"]] = x.numpy()
        cases.append({**case, "image": PHOTO, "interpolation": "bicubic",
                      "mean": list(MEAN), "std": list(STD),
                      "shape": list(x.shape), "min": float(x.min()), "max": float(x.max())})

    out_npz = os.path.join(ROOT, "tests/data/preprocess_reference.npz")
    with zipfile.ZipFile(out_npz, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, npy_bytes(array), compresslevel=9)
    # The file reads back as numpy reads any .npz, bit for bit.
    with np.load(out_npz) as check:
        for name, array in arrays.items():
            assert np.array_equal(check[name], array)

    meta = {
        "about": "scripts/make_preprocess_reference.py: PIL + torchvision evaluation "
                 "transforms of a committed photo; arrays in preprocess_reference.npz",
        "photo_sha256": hashlib.sha256(photo_bytes).hexdigest(),
        "photo_size": list(image.size),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "pil": PIL.__version__,
        "numpy": np.__version__,
        "cases": cases,
    }
    with open(os.path.join(ROOT, "tests/data/preprocess_reference.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("wrote", out_npz, os.path.getsize(out_npz), "bytes")


if __name__ == "__main__":
    main()
