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
