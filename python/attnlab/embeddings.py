"""A dataset at a glance from Python: attnlab.embed(...) runs `attnlab embed` in-process and
returns an Embeddings (the folder it wrote, read back as numpy); Embeddings.projection(...)
is `attnlab project`'s PCA / t-SNE / UMAP, and Embeddings.figure(...) its figure (shown
inline in a notebook); Embeddings.retrieve(...) is `attnlab retrieve`, and head_entropy /
head_extremes() the head statistics of `attnlab embed --heads`.
attnlab.open_embeddings(folder) reads a folder the CLI wrote."""

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
    1/0, -1 where not judged) and `images` (names); `meta` is embed.json; `features` what
    the vectors are: "output" (the block's output tokens), "keys" or "queries" (its
    attention layer's, heads concatenated)."""

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
        # Folders written before embed --features hold the block output.
        self.features_kind = self.meta.get("features", "output")
        self.projections = {}  # method -> (coords, info) of the last projection() of it
        if len(rows) != self.features.shape[0]:
            raise _attnlab.IoError(f"{self.folder}: {self.features.shape[0]} embeddings but "
                                   f"{len(rows)} rows in images.csv")

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return (f"<attnlab.Embeddings {len(self)} x {list(self.features.shape[1:])} at "
                f"{self.meta.get('block')} ({self.features_kind}, {self.meta.get('pool')}) in "
                f"{self.folder}>")

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

    # Head statistics (`attnlab embed --heads`, attnlab.embed(heads=True)).

    def _head_file(self, name):
        path = os.path.join(self.folder, name)
        return path if os.path.exists(path) else None

    def _head_array(self, name):
        path = self._head_file(name)
        return None if path is None else np.load(path, mmap_mode="r")

    @property
    def head_entropy(self):
        """(N, L, H) float32, memory-mapped: per image, layer and head the mean normalised
        attention entropy over the queries (0: every query attends to one key; 1: uniform).
        Layers with fewer heads are padded with NaN. None when the folder has no head
        statistics (embed with heads=True / attnlab embed --heads)."""
        return self._head_array("head_entropy.npy")

    @property
    def head_sharpest_patch(self):
        """(N, L, H) int64: the grid index y*W + x of each head's sharpest query (-1 for
        padding), or None without head statistics."""
        return self._head_array("head_sharpest_patch.npy")

    @property
    def head_sharpest_entropy(self):
        """(N, L, H) float32: that sharpest query's normalised entropy, or None."""
        return self._head_array("head_sharpest_entropy.npy")

    @property
    def head_output_rank(self):
        """(N, L, H) float32: the effective rank exp(H(s/sum s)) of each head's output
        (tokens x head dim, s its singular values), as the rank analysis defines it; NaN for
        padding; None without head statistics."""
        return self._head_array("head_output_rank.npy")

    @property
    def heads(self):
        """heads.json (the layers: path, mechanism, head_count, grid), or None."""
        path = self._head_file("heads.json")
        if path is None:
            return None
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def head_extremes(self, as_pandas=False):
        """head_extremes.csv: per layer and head the images where it attends most sharply
        (kind "sharpest", lowest entropy first) and most broadly ("broadest", highest first),
        as a list of dicts {layer, path, head, kind, rank, row, image, entropy, patch_y,
        patch_x} (row: the row of features; patch: the sharpest query's grid position), or a
        pandas DataFrame with as_pandas=True."""
        path = self._head_file("head_extremes.csv")
        if path is None:
            raise _attnlab.UsageError(
                f"{self.folder} has no head statistics (head_extremes.csv): embed with "
                f"heads=True / attnlab embed --heads")
        if as_pandas:
            import pandas as pd
            return pd.read_csv(path, keep_default_na=False)
        ints = ("layer", "head", "rank", "row", "patch_y", "patch_x")
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            for c in ints:
                r[c] = int(r[c])
            r["entropy"] = float(r["entropy"])
        return rows

    # Patch retrieval (`attnlab retrieve`).

    def _image_row(self, image):
        n = len(self)
        if isinstance(image, (int, np.integer)) and not isinstance(image, bool):
            if not 0 <= int(image) < n:
                raise _attnlab.UsageError(f"retrieve: image {int(image)} is not a row of "
                                          f"{self.folder} (0..{n - 1})")
            return int(image)
        name = os.fspath(image)
        hits = [i for i, x in enumerate(self.images) if x == name][:1]
        if not hits:
            hits = [i for i, x in enumerate(self.images) if os.path.basename(x) == name]
        if len(hits) != 1:
            said = "names no" if not hits else f"names {len(hits)}"
            raise _attnlab.UsageError(f"retrieve: image {name!r} {said} image(s) of "
                                      f"{self.folder}/images.csv; give its row (0..{n - 1})")
        return hits[0]

    def retrieve(self, image, patch, k=16, exclude_self=False, progress=None):
        """`attnlab retrieve`: the k patches of every image most similar (cosine of their
        token vectors) to patch `patch` = (y, x) (from the top left of the grid in
        embed.json) of image `image` (a row, or a name as images.csv gives it: the path, or
        its file name when unique). Needs a folder embedded with pool="tokens". Returns a
        list of dicts {rank (from 1), score, image_index (the row), image, label_name,
        patch_y, patch_x}, best first (ties: lower row, then lower patch). exclude_self
        leaves out every patch of the query's own image. The scan is memory-mapped and
        releases the GIL; progress: None, or callable(done rows, total rows) called between
        chunks of the scan, returning False stops (attnlab.Cancelled)."""
        if self.meta.get("pool") != "tokens":
            raise _attnlab.UsageError(
                f"retrieve: {self.folder} holds embeddings pooled {self.meta.get('pool')!r} "
                f"(one vector per image); patch retrieval needs every token: embed with "
                f"pool='tokens' (attnlab embed --pool tokens)")
        grid = self.meta.get("grid") or {}
        height, width = int(grid.get("height", 0)), int(grid.get("width", 0))
        if height < 1 or width < 1 or self.features.ndim != 3 or \
                self.features.shape[1] != height * width:
            raise _attnlab.IoError(f"{self.folder}: embeddings.npy's shape "
                                   f"{tuple(self.features.shape)} does not hold the "
                                   f"{height}x{width} grid embed.json names")
        if isinstance(patch, str):
            parts = patch.split(",")
        else:
            parts = list(patch)
        try:
            if len(parts) != 2:
                raise ValueError
            y, x = (int(p) for p in parts)
        except (TypeError, ValueError):
            raise _attnlab.UsageError(f"retrieve: patch wants (y, x) (two integers, row then "
                                      f"column), not {patch!r}") from None
        if not (0 <= y < height and 0 <= x < width):
            raise _attnlab.UsageError(
                f"retrieve: patch ({y}, {x}) is outside the {height}x{width} grid of "
                f"{self.folder} (y in 0..{height - 1}, x in 0..{width - 1})")
        row = self._image_row(image)
        k = int(k)
        if k < 1:
            raise _attnlab.UsageError(f"retrieve: k at least 1, not {k}")
        matches = _attnlab._retrieve(os.path.join(self.folder, "embeddings.npy"), row,
                                     y * width + x, k, bool(exclude_self),
                                     None if progress in (None, False) else progress)
        return [dict(rank=i + 1, score=float(score), image_index=int(im),
                     image=self.images[im], label_name=self.rows[im].get("label_name", ""),
                     patch_y=int(token) // width, patch_x=int(token) % width)
                for i, (im, token, score) in enumerate(matches)]


def embed(model, images=None, dataset=None, out=None, layer=-1, pool=None, batch=32,
          limit=None, heads=False, head_examples=8, progress=None, features="output"):
    """`attnlab embed` in-process: every image (files, a folder — class sub-folders label it —
    or dataset="fashion-mnist:test" / "folder:DIR") as its embedding at block `layer`
    (negative from the end), pooled as `pool` ("head": as the model's head pools; "cls",
    "mean", "tokens"; None: "head" for the output, "mean" for keys and queries).
    features (`--features`): "output" (the block's output tokens), or "keys" / "queries" of
    the block's attention layer (per token its heads' vectors concatenated; mechanisms whose
    keys are pooled or sampled refuse keys). Writes the CLI's folder (out=None: a new temporary folder, kept) and
    returns it as Embeddings. Unreadable images are left out (Embeddings.meta["errors"]).
    heads=True (`--heads`) also keeps every head's attention sharpness per image
    (Embeddings.head_entropy) and, per head, the head_examples images where it attends most
    sharply and most broadly (Embeddings.head_extremes()).
    progress: callable(done, total); returning False stops (attnlab.Cancelled)."""
    from . import _progress
    if isinstance(images, (str, os.PathLike)):
        images = [images]
    folder = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="attnlab-embed-")
    model._embed(folder, [os.fspath(i) for i in (images or [])], dataset or "", int(layer),
                 pool or "", int(batch), int(limit or 0), bool(heads), int(head_examples),
                 _progress(progress), str(features))
    return Embeddings(folder)


def open_embeddings(folder):
    """An embed folder the CLI (or attnlab.embed) wrote, as Embeddings."""
    return Embeddings(folder)
