"""attnlab.embed and Embeddings (issue 70 goals 1, 2 and 6): the CLI's embed folder written
in-process, its projections (PCA against numpy's SVD), their determinism, the figure, and
the refusals and cancellation."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import attnlab
from conftest import IMAGES, ZOO


@pytest.fixture(scope="module")
def class_tree(tmp_path_factory):
    """The committed samples as DIR/<NN-class>/<png>: labelled by their folders."""
    root = tmp_path_factory.mktemp("tree")
    for name in sorted(os.listdir(IMAGES)):
        if name.endswith(".png"):
            cls = name[:name.rfind("-")]
            (root / cls).mkdir(exist_ok=True)
            shutil.copy(IMAGES / name, root / cls / name)
    return root


@pytest.fixture(scope="module")
def tree_embeddings(softmax, class_tree, tmp_path_factory):
    return attnlab.embed(softmax, images=class_tree, out=tmp_path_factory.mktemp("emb"),
                         batch=8, progress=False)


def test_embed_labels_a_class_tree(tree_embeddings):
    e = tree_embeddings
    assert e.features.shape == (30, 128) and e.features.dtype == np.float32
    assert len(e) == 30 and e.meta["block"] == "blocks.3" and e.meta["pool"] == "head"
    # Sorted class folders: 00-t-shirt-top is label 0, ..., 09-ankle-boot is 9.
    for image, label in zip(e.images, e.labels):
        assert int(os.path.basename(os.path.dirname(image))[:2]) == label
    judged = e.correct >= 0
    assert judged.all()
    assert (e.correct == (e.labels == e.predictions)).all()
    assert e.meta["correct"] == int(e.correct.sum())
    assert ((e.confidence > 0) & (e.confidence <= 1)).all()


def test_embed_equals_the_cli(tree_embeddings, class_tree, tmp_path):
    cli = os.environ.get("ATTNLAB_CLI")
    if not cli:
        pytest.skip("ATTNLAB_CLI (the attnlab binary) is not set")
    out = tmp_path / "cli"
    subprocess.run([cli, "--threads", "1", "embed", "--model", str(ZOO / "softmax.safetensors"),
                    "--images", str(class_tree), "--batch", "8", "--out", str(out)],
                   check=True, capture_output=True)
    cli = attnlab.open_embeddings(out)
    assert cli.images == tree_embeddings.images
    assert (cli.labels == tree_embeddings.labels).all()
    assert (cli.predictions == tree_embeddings.predictions).all()
    # Probabilities written with 6 significant digits, of forwards that may round differently
    # in another process: within one unit of the 6th digit and float32 rounding.
    assert np.abs(cli.confidence - tree_embeddings.confidence).max() <= 2e-6
    cli_features = np.asarray(cli.features)
    # The same batches through the same model in another process: equal up to the rounding
    # of a float32 forward (the scale of its largest feature times a few ulps).
    scale = np.abs(cli_features).max()
    assert np.abs(cli_features - tree_embeddings.features).max() <= 1e-5 * scale


def test_pca_is_numpys_svd_up_to_sign(tree_embeddings):
    x = np.asarray(tree_embeddings.features, dtype=np.float64)
    coords = tree_embeddings.projection("pca")
    centred = x - x.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    reference = centred @ vt[:2].T
    for j in range(2):
        sign = np.sign(np.dot(coords[:, j], reference[:, j]))
        # Two float64 eigen-solvers of a 128×128 covariance with separated eigenvalues:
        # agreement to ~1e-12 of the scale; 1e-8 leaves room for an ill-separated pair.
        assert np.abs(coords[:, j] - sign * reference[:, j]).max() <= 1e-8 * np.abs(reference).max()
    info = tree_embeddings.projections["pca"][1]
    ratio = (s[:2] ** 2) / (s ** 2).sum()
    assert np.allclose(info["explained_variance_ratio"], ratio, rtol=1e-9)


def test_tsne_and_umap_are_deterministic_for_a_seed(tree_embeddings):
    for method, options in (("tsne", dict(perplexity=5, iterations=300)),
                            ("umap", dict(neighbors=5, iterations=100))):
        a = tree_embeddings.projection(method, seed=3, progress=False, **options)
        b = tree_embeddings.projection(method, seed=3, progress=False, **options)
        assert a.shape == (30, 2) and np.isfinite(a).all()
        assert np.array_equal(a, b), method  # the same computation twice
    assert tree_embeddings.projections["tsne"][1]["kl_divergence"] > 0


def test_figure_is_the_projection_coloured(tree_embeddings):
    figure = tree_embeddings.figure("pca")
    svg = figure._repr_svg_()
    correct = int(tree_embeddings.correct.sum())
    assert f"correct ({correct})" in svg
    assert "00-t-shirt-top" in svg  # classes named by the folders
    assert figure.stem == "projection_pca"
    with pytest.raises(ValueError, match="label, prediction, correct or confidence"):
        tree_embeddings.figure("pca", colour=["texture"])


def test_refusals_and_cancellation(softmax, tmp_path):
    with pytest.raises(Exception, match="head, cls, mean or tokens"):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "a", pool="max")
    with pytest.raises(Exception, match="not both"):
        attnlab.embed(softmax, images=IMAGES, dataset="fashion-mnist:test", out=tmp_path / "b")
    with pytest.raises(Exception, match="the model has 4 blocks"):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "c", layer=7, progress=False)
    assert not (tmp_path / "c" / "embeddings.npy").exists()
    with pytest.raises(attnlab.Cancelled):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "d", batch=4,
                      progress=lambda done, total: False)
    assert not (tmp_path / "d" / "embeddings.npy").exists()
    tokens = attnlab.embed(softmax, images=IMAGES, out=tmp_path / "e", pool="tokens", limit=4,
                           progress=False)
    assert tokens.features.shape == (4, 196, 128)
    with pytest.raises(attnlab.UsageError, match="retrieval"):
        tokens.projection("pca")


# Patch retrieval (Embeddings.retrieve, `attnlab retrieve`) and head statistics
# (attnlab.embed(heads=True), `attnlab embed --heads`).

@pytest.fixture(scope="module")
def token_embeddings(softmax, tmp_path_factory):
    return attnlab.embed(softmax, images=IMAGES, out=tmp_path_factory.mktemp("tokens"),
                         pool="tokens", batch=8, progress=False)


def _score_tolerance(features):
    # core/retrieval/top_k.h: float32 sums of F products, so a score is within
    # (F + 2)·2^-24 of the exact cosine; twice that between two computations of it.
    return 2 * (features + 2) * 2.0 ** -24


def _cosines(e, row, y, x):
    grid = e.meta["grid"]
    t = np.asarray(e.features, dtype=np.float64)
    q = t[row, y * grid["width"] + x]
    norms = np.linalg.norm(t, axis=2) * np.linalg.norm(q)
    return (t @ q) / np.where(norms > 0, norms, 1.0)  # (N, T)


def test_retrieve_finds_the_query_patch_first(token_embeddings):
    e = token_embeddings
    assert e.features.shape == (30, 196, 128)
    assert e.meta["grid"]["height"] == 14 and e.meta["grid"]["width"] == 14
    tol = _score_tolerance(e.features.shape[2])
    hits = e.retrieve(3, (5, 7), k=10)
    assert len(hits) == 10
    assert [h["rank"] for h in hits] == list(range(1, 11))
    top = hits[0]
    assert (top["image_index"], top["patch_y"], top["patch_x"]) == (3, 5, 7)
    assert abs(top["score"] - 1.0) <= tol
    assert top["image"] == e.images[3] and top["label_name"] == e.rows[3]["label_name"]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    # The scores are the cosines numpy computes in float64, and nothing left out beats them.
    cos = _cosines(e, 3, 5, 7)
    for h in hits:
        assert abs(h["score"] - cos[h["image_index"], h["patch_y"] * 14 + h["patch_x"]]) <= tol
    chosen = np.zeros(cos.shape, dtype=bool)
    for h in hits:
        chosen[h["image_index"], h["patch_y"] * 14 + h["patch_x"]] = True
    assert cos[~chosen].max() <= scores[-1] + tol
    # The image named as images.csv names it (its path, or its unique file name), the
    # patch as "Y,X": the same answer.
    assert e.retrieve(e.images[3], "5,7", k=10) == hits
    assert e.retrieve(os.path.basename(e.images[3]), [5, 7], k=10) == hits


def test_retrieve_exclude_self(token_embeddings):
    e = token_embeddings
    hits = e.retrieve(3, (5, 7), k=20, exclude_self=True)
    assert len(hits) == 20
    assert all(h["image_index"] != 3 for h in hits)
    cos = _cosines(e, 3, 5, 7)
    cos[3] = -np.inf
    assert abs(hits[0]["score"] - cos.max()) <= _score_tolerance(e.features.shape[2])


def test_retrieve_equals_the_cli(token_embeddings, tmp_path):
    cli = os.environ.get("ATTNLAB_CLI")
    if not cli:
        pytest.skip("ATTNLAB_CLI (the attnlab binary) is not set")
    import csv
    e = token_embeddings
    tol = _score_tolerance(e.features.shape[2])
    for exclude in (False, True):
        out = tmp_path / f"retrieve-{exclude}.csv"
        subprocess.run([cli, "--threads", "1", "retrieve", e.folder, "--image", "7", "--patch",
                        "2,11", "--k", "12", "--out", str(out)] +
                       (["--exclude-self"] if exclude else []), check=True, capture_output=True)
        with open(out, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        hits = e.retrieve(7, (2, 11), k=12, exclude_self=exclude)
        assert len(rows) == len(hits) == 12
        for row, hit in zip(rows, hits):
            for key in ("rank", "image_index", "patch_y", "patch_x"):
                assert int(row[key]) == hit[key], key
            assert row["image"] == hit["image"] and row["label_name"] == hit["label_name"]
            # The same float32 computation, written with 9 significant digits.
            assert abs(float(row["score"]) - hit["score"]) <= tol


def test_retrieve_refusals(token_embeddings, tree_embeddings):
    e = token_embeddings
    with pytest.raises(attnlab.UsageError, match="pool='tokens'"):
        tree_embeddings.retrieve(0, (0, 0))
    with pytest.raises(attnlab.UsageError, match=r"outside the 14x14 grid"):
        e.retrieve(0, (14, 0))
    with pytest.raises(attnlab.UsageError, match=r"outside the 14x14 grid"):
        e.retrieve(0, (0, -1))
    with pytest.raises(attnlab.UsageError, match="two integers"):
        e.retrieve(0, "3")
    with pytest.raises(attnlab.UsageError, match=r"not a row of .*\(0\.\.29\)"):
        e.retrieve(30, (0, 0))
    with pytest.raises(attnlab.UsageError, match="names no image"):
        e.retrieve("no-such.png", (0, 0))
    with pytest.raises(attnlab.UsageError, match="k at least 1"):
        e.retrieve(0, (0, 0), k=0)
    # The binding checks its arguments too.
    path = os.path.join(e.folder, "embeddings.npy")
    with pytest.raises(attnlab.UsageError, match="not a row"):
        attnlab._attnlab._retrieve(path, 30, 0, 5, False)
    with pytest.raises(attnlab.UsageError, match="outside the 196 tokens"):
        attnlab._attnlab._retrieve(path, 0, 196, 5, False)
    with pytest.raises(attnlab.Cancelled):
        attnlab._attnlab._retrieve(path, 0, 0, 5, False, lambda done, total: False)


@pytest.fixture(scope="module")
def head_embeddings(softmax, tmp_path_factory):
    return attnlab.embed(softmax, images=IMAGES, out=tmp_path_factory.mktemp("heads"),
                         batch=8, heads=True, head_examples=3, progress=False)


def test_head_statistics(head_embeddings):
    e = head_embeddings
    assert e.meta["head_stats"] is True and e.meta["head_examples"] == 3
    entropy = e.head_entropy
    assert entropy.shape == (30, 4, 2) and entropy.dtype == np.float32
    assert np.isfinite(entropy).all() and (entropy >= 0).all() and (entropy <= 1 + 1e-6).all()
    assert e.head_sharpest_patch.shape == (30, 4, 2)
    assert e.head_sharpest_patch.dtype == np.int64
    rank = e.head_output_rank  # effective rank of a 196 x 64 output: within [1, 64]
    assert rank.shape == (30, 4, 2) and ((rank >= 1) & (rank <= 64)).all()
    assert len(e.heads["layers"]) == 4
    rows = e.head_extremes()
    assert len(rows) == 4 * 2 * 2 * 3
    assert set(rows[0]) == {"layer", "path", "head", "kind", "rank", "row", "image", "entropy",
                            "patch_y", "patch_x"}
    first = next(r for r in rows if r["kind"] == "sharpest")
    assert first["rank"] == 1
    column = np.asarray(entropy[:, first["layer"], first["head"]], dtype=np.float64)
    # head_extremes.csv writes entropies with 6 significant digits.
    assert abs(first["entropy"] - column.min()) <= 5e-6 * max(column.min(), 1e-30)
    assert abs(column[first["row"]] - column.min()) == 0
    assert first["image"] == e.images[first["row"]]
    for r in rows:
        if r["kind"] == "broadest" and r["rank"] == 1:
            column = entropy[:, r["layer"], r["head"]]
            assert abs(r["entropy"] - float(column.max())) <= 5e-6 * float(column.max())


def test_head_statistics_as_pandas(head_embeddings):
    pytest.importorskip("pandas")
    frame = head_embeddings.head_extremes(as_pandas=True)
    assert len(frame) == 4 * 2 * 2 * 3
    assert list(frame.columns[:4]) == ["layer", "path", "head", "kind"]


def test_head_statistics_refusals(tree_embeddings, softmax, tmp_path):
    assert tree_embeddings.head_entropy is None
    assert tree_embeddings.head_output_rank is None
    assert tree_embeddings.heads is None
    with pytest.raises(attnlab.UsageError, match="heads=True / attnlab embed --heads"):
        tree_embeddings.head_extremes()
    with pytest.raises(attnlab.UsageError, match="head_examples: at least 1"):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "h", heads=True, head_examples=0,
                      progress=False)


# --features keys / queries (issue 70 goal 4): the block's attention keys or queries.

def test_embed_keys_and_queries(softmax, tmp_path):
    keys = attnlab.embed(softmax, images=IMAGES, out=tmp_path / "k", features="keys",
                         pool="tokens", limit=6, batch=3, progress=False)
    assert keys.features_kind == "keys" and keys.meta["attention"] == "blocks.3.attn"
    assert keys.features.shape == (6, 196, 128)  # 2 heads x 64, side by side
    assert "keys" in repr(keys)
    # pool=None: the mean for keys and queries (the model's head reads the block output).
    queries = attnlab.embed(softmax, images=IMAGES, out=tmp_path / "q", features="queries",
                            limit=6, batch=3, progress=False)
    assert queries.meta["pool"] == "mean" and queries.features.shape == (6, 128)
    q_tokens = attnlab.embed(softmax, images=IMAGES, out=tmp_path / "qt", features="queries",
                             pool="tokens", limit=6, batch=3, progress=False)
    # Two float32 means of the same 196 rows (summation order may differ): a few ulps of
    # the largest value, far under 1e-5 of it.
    k = np.asarray(q_tokens.features, dtype=np.float64)
    scale = np.abs(k).max()
    assert np.abs(k.mean(axis=1) - queries.features).max() < 1e-5 * scale
    # Keys and queries are different projections of the same tokens.
    assert np.abs(np.asarray(keys.features) - k).max() > 0.1 * scale
    # Retrieval reads the keys like any token folder: the query patch finds itself first.
    hits = keys.retrieve(2, (5, 7), k=3)
    assert len(hits) == 3 and (hits[0]["image_index"], hits[0]["patch_y"],
                               hits[0]["patch_x"]) == (2, 5, 7)
    # The default is the output, recorded as such; a folder without the key means it too.
    out = attnlab.embed(softmax, images=IMAGES, out=tmp_path / "o", limit=2, progress=False)
    assert out.features_kind == "output" and out.meta["pool"] == "head"
    meta = dict(out.meta)
    del meta["features"]
    import json
    with open(os.path.join(out.folder, "embed.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    assert attnlab.open_embeddings(out.folder).features_kind == "output"


def test_embed_features_refusals(softmax, tmp_path):
    with pytest.raises(Exception, match="output, keys or queries, not 'values'"):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "a", features="values")
    with pytest.raises(Exception, match="--pool head"):
        attnlab.embed(softmax, images=IMAGES, out=tmp_path / "b", features="keys", pool="head",
                      progress=False)
    hilo = attnlab.load(str(ZOO / "hilo.safetensors"))
    with pytest.raises(Exception, match=r"blocks\.3\.attn \(hilo\).*keys are pooled 2x2"):
        attnlab.embed(hilo, images=IMAGES, out=tmp_path / "c", features="keys", limit=2,
                      progress=False)
    assert not (tmp_path / "c" / "embeddings.npy").exists()
