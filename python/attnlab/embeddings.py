"""A dataset at a glance from Python: attnlab.embed(...) runs `attnlab embed` in-process and
returns an Embeddings (the folder it wrote, read back as numpy); Embeddings.projection(...)
is `attnlab project`'s PCA / t-SNE / UMAP, and Embeddings.figure(...) its figure (shown
inline in a notebook). attnlab.open_embeddings(folder) reads a folder the CLI wrote."""

import csv
import json
import os
import tempfile

import numpy as np

from . import _attnlab

_METHODS = ("pca", "tsne", "umap")


class Embeddings:
    """An embed folder: `features` (N, F) float32 (or (N, H*W, F) token grids for
    pool="tokens"), memory-mapped from embeddings.npy; the images.csv columns as numpy
    arrays (`labels`, `predictions`: -1 for none; `confidence`: NaN for none; `correct`:
    1/0, -1 where not judged) and `images` (names); `meta` is embed.json."""

    def __init__(self, folder):
        self.folder = os.fspath(folder)
        with open(os.path.join(self.folder, "embed.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        self.features = np.load(os.path.join(self.folder, "embeddings.npy"), mmap_mode="r")
        with open(os.path.join(self.folder, "images.csv"), encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        self.rows = rows
        self.images = [r["image"] for r in rows]
        self.labels = np.array([int(r["label"]) for r in rows], dtype=np.int64)
        self.predictions = np.array([int(r["prediction"]) for r in rows], dtype=np.int64)
        self.confidence = np.array([float(r["confidence"]) if r["confidence"] else np.nan
                                    for r in rows], dtype=np.float64)
        self.correct = np.array([int(r["correct"]) if r["correct"] else -1 for r in rows],
                                dtype=np.int64)
        self.projections = {}  # method -> (coords, info) of the last projection() of it
        if len(rows) != self.features.shape[0]:
            raise _attnlab.IoError(f"{self.folder}: {self.features.shape[0]} embeddings but "
                                   f"{len(rows)} rows in images.csv")

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return (f"<attnlab.Embeddings {len(self)} x {list(self.features.shape[1:])} at "
                f"{self.meta.get('block')} ({self.meta.get('pool')}) in {self.folder}>")

    def to_pandas(self):
        """images.csv as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd
        return pd.read_csv(os.path.join(self.folder, "images.csv"), keep_default_na=False)

    def projection(self, method="pca", dims=2, perplexity=30.0, neighbors=15, min_dist=0.1,
                   iterations=0, seed=0, progress=None):
        """The (N, dims) float64 coordinates of `attnlab project --method METHOD` (pca, tsne,
        umap) on the pooled features; what the method reports (explained variance, KL
        divergence, ...) is in .projections[method][1]. Deterministic for a seed."""
        if self.features.ndim != 2:
            raise _attnlab.UsageError("projection: token grids (pool='tokens') are for "
                                      "retrieval; embed with pool='head', 'cls' or 'mean'")
        from . import _progress
        coords, info = _attnlab._project(np.ascontiguousarray(self.features, dtype=np.float32),
                                         method, dims, perplexity, neighbors, min_dist,
                                         iterations, seed, _progress(progress))
        self.projections[info["method"]] = (coords, info)
        return coords

    def figure(self, method="pca", colour=None, **projection_options):
        """`attnlab project`'s figure (attnlab.Figure: svg(), png(), save(); inline in a
        notebook): the projection coloured by label, prediction, correct/wrong and confidence
        (colour= a list of those words). Projects first unless .projection(method) ran."""
        key = "tsne" if method in ("t-sne", "t-SNE") else method.lower()
        if key not in self.projections or projection_options:
            self.projection(key, **projection_options)
        coords, info = self.projections[key]
        model = self.meta.get("model", {})
        checkpoint = model.get("checkpoint") or {}
        path = checkpoint.get("path") if isinstance(checkpoint, dict) else checkpoint
        name = model.get("preset") or os.path.splitext(os.path.basename(path or "model"))[0]
        return _attnlab._projection_figure(self.folder, key, coords, info.get("axes", []), name,
                                           list(colour or []))


def embed(model, images=None, dataset=None, out=None, layer=-1, pool="head", batch=32,
          limit=None, progress=None):
    """`attnlab embed` in-process: every image (files, a folder — class sub-folders label it —
    or dataset="fashion-mnist:test" / "folder:DIR") as its embedding at block `layer`
    (negative from the end), pooled as `pool` ("head": as the model's head pools; "cls",
    "mean", "tokens"). Writes the CLI's folder (out=None: a new temporary folder, kept) and
    returns it as Embeddings. Unreadable images are left out (Embeddings.meta["errors"]).
    progress: callable(done, total); returning False stops (attnlab.Cancelled)."""
    from . import _progress
    if isinstance(images, (str, os.PathLike)):
        images = [images]
    folder = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="attnlab-embed-")
    model._embed(folder, [os.fspath(i) for i in (images or [])], dataset or "", int(layer),
                 pool, int(batch), int(limit or 0), _progress(progress))
    return Embeddings(folder)


def open_embeddings(folder):
    """An embed folder the CLI (or attnlab.embed) wrote, as Embeddings."""
    return Embeddings(folder)
