"""`import attnlab` (python/): the registries, loading, analyze's results, errors by kind
and argument, the GIL released during work, cancellation, and equality with the CLI."""
import os
import pathlib
import signal
import struct
import subprocess
import threading
import zlib

import numpy as np
import pytest

import attnlab
from conftest import IMAGES, ZOO


def write_png(path, rgb):
    """A minimal 8-bit RGB PNG writer (no imaging library needed)."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    pathlib.Path(path).write_bytes(data)


def test_registries_list_what_the_cli_lists():
    names = {a["name"] for a in attnlab.analyses()}
    assert {"maps", "rollout", "rank", "entropy", "spectra", "similarity", "lens"} <= names
    outliers = next(a for a in attnlab.analyses() if a["name"] == "outliers")
    assert any(o["keyword"] == "outlier_factor" for o in outliers["options"])
    mechanisms = {m["name"] for m in attnlab.mechanisms()}
    assert {"softmax", "hilo", "rala", "castling", "anchor", "linear"} <= mechanisms
    assert any(p["name"] == "deit_tiny_patch16_224" for p in attnlab.presets())
    # The CLI's own lists name the same things.
    cli = os.environ.get("ATTNLAB_CLI")
    if cli:
        listed = subprocess.run([cli, "mechanisms"], capture_output=True, text=True, check=True).stdout
        for m in mechanisms:
            assert m in listed


def test_load_and_describe(softmax):
    d = softmax.describe()
    assert softmax.tag == "softmax"
    assert d["arch"] and d["device"] == "cpu"
    assert "preprocessing" in d
    bigger = attnlab.load(str(ZOO / "softmax.safetensors"), img_size=42)
    r = bigger.analyze(str(IMAGES / "09-ankle-boot-00000.png"), analyses="maps")
    assert r.metadata["layers"]  # it ran at 42 px


def test_results_tables_arrays_metadata(softmax, boot):
    r = softmax.analyze(boot, analyses=["rank", "entropy"])
    rank = r.tables["rank_heads"]
    assert rank["layer"].dtype == np.int64 and rank["rank_mean"].dtype == np.float64
    assert isinstance(rank["mechanism"], list) and rank["mechanism"][0] == "softmax"
    assert r.key_columns["rank_heads"] >= 1 and r.captions["rank_heads"]
    arrays = r.arrays
    assert arrays and all(a.dtype == np.float32 for a in arrays.values())
    a = next(iter(arrays.values()))
    assert not a.flags.writeable and not a.flags.owndata  # a view of the result, no copy
    assert r.metadata["images"][0]["tag"] == "09-ankle-boot-00000"
    assert r.metadata["settings"]["analyses"]


def test_every_analysis_runs_or_says_why_not(softmax, boot):
    r = softmax.analyze(boot)  # all (the opt-in ones are named below)
    requested = set(r.metadata["settings"]["analyses"])
    opt_in = {a["name"] for a in attnlab.analyses()} - requested
    r_opt = softmax.analyze(boot, analyses=sorted(opt_in - {"cka", "castling_mask"}))
    skipped = " ".join(r.metadata["skipped"] + r_opt.metadata["skipped"])
    produced = (set(r.tables) | set(r_opt.tables) |
                {k.split("__")[0] for k in list(r.arrays) + list(r_opt.arrays)})
    for a in attnlab.analyses():
        if a["series"] or not a["tables"] or a["name"] in ("cka", "castling_mask"):
            continue  # series analyses compare checkpoints or models, not one model's image
        ran = any(t in produced for t in a["tables"])
        assert ran or a["name"] in skipped, a["name"]


def test_an_array_image_is_the_same_as_its_file(softmax, tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, size=(28, 28, 3), dtype=np.uint8)
    write_png(tmp_path / "noise.png", rgb)
    from_file = softmax.analyze(str(tmp_path / "noise.png"), analyses="rank,entropy")
    from_array = softmax.analyze(rgb, analyses="rank,entropy")
    for name, columns in from_file.tables.items():
        for col, values in columns.items():
            if col in ("image",):
                continue
            if isinstance(values, list):
                assert values == from_array.tables[name][col]
            else:  # the same pixels through the same code: the same values
                assert np.array_equal(values, from_array.tables[name][col], equal_nan=True), (name, col)


class Producer:
    """A DLPack producer that is not a numpy array, as a torch.Tensor, a CuPy or a JAX array
    is: the module takes those through DLPack in either LibTorch world."""
    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_a_dlpack_tensor_is_a_picture_or_a_preprocessed_batch(softmax):
    rng = np.random.default_rng(1)
    rgbs = [rng.integers(0, 256, size=(28, 28, 3), dtype=np.uint8) for _ in range(2)]
    from_arrays = softmax.analyze(rgbs, analyses="entropy", progress=False)
    from_picture = softmax.analyze(Producer(rgbs[0]), analyses="entropy", progress=False)
    assert from_picture.metadata["images"][0]["tag"] == "tensor0"
    p = softmax.describe()["config"]["preprocessing"]  # 28×28 pictures stay as they are
    mean, std = np.float32(p["mean"]).reshape(3, 1, 1), np.float32(p["std"]).reshape(3, 1, 1)
    batch = np.stack([(x.transpose(2, 0, 1).astype(np.float32) / np.float32(255) - mean) / std
                      for x in rgbs])
    from_batch = softmax.analyze(Producer(batch), analyses="entropy", progress=False)
    assert [i["tag"] for i in from_batch.metadata["images"]] == ["tensor0", "tensor1"]
    same = softmax.analyze(rgbs[0], analyses="entropy", progress=False)
    for name, columns in from_arrays.tables.items():
        for col, values in columns.items():
            if isinstance(values, list):
                continue
            # The picture: the same pixels through the same code, the same values.
            assert np.array_equal(same.tables[name][col], from_picture.tables[name][col],
                                  equal_nan=True), col
            # The batch: numpy's normalisation, the engine's within float rounding.
            assert np.allclose(values, from_batch.tables[name][col], rtol=1e-4, atol=1e-6,
                               equal_nan=True), col
    with pytest.raises(attnlab.UsageError, match=r"N×3×28×28 .*not \(1, 3, 8, 8\)"):
        softmax.analyze(Producer(np.zeros((1, 3, 8, 8), np.float32)))
    with pytest.raises(attnlab.UsageError, match=r"H×W×3 uint8 .*of shape \(4, 4\)"):
        softmax.analyze(Producer(np.zeros((4, 4), np.int32)))


def test_errors_name_the_argument(softmax, boot):
    with pytest.raises(attnlab.UsageError, match="no such image"):
        softmax.analyze("/no/such.png")
    with pytest.raises(attnlab.UsageError, match="H×W×3 uint8"):
        softmax.analyze(np.zeros((5, 5), np.uint8))
    with pytest.raises(attnlab.UsageError, match="outlier_factr"):
        softmax.analyze(boot, outlier_factr=3)
    with pytest.raises(attnlab.UsageError, match="outlier_factor"):
        softmax.analyze(boot, outlier_factor=-3)
    with pytest.raises(attnlab.UsageError, match="analyses: unknown analysis 'bogus'"):
        softmax.analyze(boot, analyses="bogus")
    with pytest.raises(attnlab.UsageError, match="query"):
        softmax.analyze(boot, query=(-1, 2))
    with pytest.raises(attnlab.UsageError, match="edits"):
        softmax.analyze(boot, edits="smudge:1,1,1")
    with pytest.raises(attnlab.UsageError, match="neither a preset"):
        attnlab.load("no_such_preset")
    with pytest.raises(attnlab.IoError, match="unrecognised file format"):
        attnlab.load(__file__)
    with pytest.raises(attnlab.UsageError, match="img_size"):
        attnlab.load(str(ZOO / "softmax.safetensors"), img_size=(0, 3))
    assert issubclass(attnlab.UsageError, ValueError)
    assert issubclass(attnlab.IoError, OSError)


def test_the_gil_is_released_while_it_works(softmax):
    # A second thread counts while analyze runs; the progress callback (called between
    # images, with the GIL) samples the count. With the GIL held through the C++ work the
    # thread could not count between two images.
    stop = threading.Event()
    count = [0]
    def counter():
        while not stop.is_set():
            count[0] += 1
    t = threading.Thread(target=counter)
    t.start()
    samples = []
    try:
        softmax.analyze(str(IMAGES), analyses="rank,entropy,spectra",
                        progress=lambda done, total: samples.append(count[0]))
    finally:
        stop.set()
        t.join()
    assert len(samples) >= 3
    assert all(b > a for a, b in zip(samples[1:], samples[2:])), samples


def test_a_progress_callback_can_stop_it(softmax):
    seen = []
    def progress(done, total):
        seen.append((done, total))
        return done < 2
    with pytest.raises(attnlab.Cancelled):
        softmax.analyze(str(IMAGES), analyses="rank", progress=progress)
    assert seen[-1][0] == 2


def test_ctrl_c_stops_it_with_keyboard_interrupt(softmax):
    # SIGINT from another thread once the work runs: the engine's cancellation check
    # (between images and inside long analyses) sees it and raises KeyboardInterrupt.
    def progress(done, total):
        if done == 1:
            threading.Thread(target=lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        softmax.analyze(str(IMAGES), progress=progress)


def test_the_same_analysis_as_the_cli_gives_the_same_files(softmax, tmp_path):
    cli = os.environ.get("ATTNLAB_CLI")
    if not cli:
        pytest.skip("ATTNLAB_CLI (the attnlab binary) is not set")
    images = [str(IMAGES / "09-ankle-boot-00000.png"), str(IMAGES / "00-t-shirt-top-00019.png")]
    analyses = "maps,rank,entropy,spectra,locality,outliers,similarity,lens"
    subprocess.run([cli, "analyze", "--threads", "1", "--model", str(ZOO / "softmax.safetensors"),
                    "--images", *images, "--analyses", analyses, "--query", "3,4",
                    "--outlier-factor", "3", "--out", str(tmp_path / "cli")],
                   check=True, capture_output=True)
    r = softmax.analyze(images, analyses=analyses, query=(3, 4), outlier_factor=3)
    r.save(str(tmp_path / "py"))
    cli_files = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*")
                       if p.is_file() and not p.name.endswith("__settings.json"))
    py_files = sorted(p.relative_to(tmp_path / "py") for p in (tmp_path / "py").rglob("*")
                      if p.is_file() and not p.name.endswith("__settings.json"))
    assert cli_files == py_files
    assert any(str(f).endswith(".npy") for f in cli_files)
    for f in cli_files:
        a, b = tmp_path / "cli" / f, tmp_path / "py" / f
        if f.suffix == ".npy":  # the same computation in one thread: identical values
            assert np.array_equal(np.load(a), np.load(b), equal_nan=True), f
        else:  # CSV, JSON, LaTeX written by the same writer from the same values
            assert a.read_bytes() == b.read_bytes(), f


def test_query_maps_from_the_traces_are_the_maps_analysis(softmax, boot):
    traces = softmax.trace(boot)
    assert len(traces.layers) >= 2 and traces.layers[0]["grid"] == (14, 14)
    heads = traces.query_map(layer=1, query=(3, 4), head="all")
    assert heads.shape == (traces.layers[1]["heads"], 14, 14) and heads.dtype == np.float32
    mean = traces.query_map(layer=1, query=(3, 4))
    # The head mean is the mean of the heads' maps (float32 sums of a few terms).
    assert np.allclose(mean, heads.mean(axis=0), rtol=1e-6, atol=1e-7)
    assert np.array_equal(traces.query_map(layer=1, query=(3, 4), head=1), heads[1])
    # The maps analysis writes the same rows for the same query.
    r = softmax.analyze(boot, analyses="maps", query=(3, 4))
    written = [a for k, a in r.arrays.items() if "L01" in k and a.ndim == 3 and a.shape[0] == heads.shape[0]]
    assert any(np.array_equal(w, heads) for w in written), sorted(r.arrays)
    # Model.query_map: the same map in one call (a forward, then the same query).
    assert np.array_equal(softmax.query_map(boot, layer=1, query=(3, 4), head="all"), heads)
    with pytest.raises(attnlab.UsageError, match="layer"):
        traces.query_map(layer=99)
    with pytest.raises(attnlab.UsageError, match="head"):
        traces.query_map(head=99)
    with pytest.raises(attnlab.UsageError, match="query"):
        traces.query_map(query=(99, 0))
    with pytest.raises(attnlab.UsageError, match="fusion"):
        traces.query_map(fusion="median")


def test_classify_is_the_clis_classify(softmax, boot, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(pathlib.Path(boot).read_bytes()[:100])  # a cut PNG
    answers = softmax.classify([boot, str(IMAGES / "00-t-shirt-top-00019.png"), str(broken)], top=3)
    assert [a["tag"] for a in answers] == ["09-ankle-boot-00000", "00-t-shirt-top-00019", "broken"]
    assert "error" in answers[2] and "top" not in answers[2]  # said, the others classified
    for a in answers[:2]:
        assert len(a["top"]) == 3
        probabilities = [p for _, _, p in a["top"]]
        assert probabilities == sorted(probabilities, reverse=True) and 0 < sum(probabilities) <= 1 + 1e-9
    cli = os.environ.get("ATTNLAB_CLI")
    if cli:  # the CLI's top-1 name for the same image
        out = subprocess.run([cli, "--threads", "1", "classify", "--model", str(ZOO / "softmax.safetensors"),
                              "--top", "1", boot], capture_output=True, text=True, check=True).stdout
        assert answers[0]["top"][0][1] in out
    with pytest.raises(attnlab.UsageError, match="top"):
        softmax.classify(boot, top=0)
