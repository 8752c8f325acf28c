"""`import attnlab`, the rest of the CLI: Results.figure against `attnlab report`'s files,
Model.faithfulness against `attnlab faithfulness`, attnlab.complexity against `attnlab
complexity`, attnlab.bench_attention, and tensors through DLPack."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import attnlab
from conftest import IMAGES, ZOO

CLI = os.environ.get("ATTNLAB_CLI")
TWO = [str(IMAGES / "09-ankle-boot-00000.png"), str(IMAGES / "00-t-shirt-top-00019.png")]


def cli(*args):
    if not CLI:
        pytest.skip("ATTNLAB_CLI (the attnlab binary) is not set")
    return subprocess.run([CLI, "--threads", "1", *args], check=True, capture_output=True, text=True)


def same_csv_files(cli_dir, py_dir):
    """Every CSV the CLI wrote, written byte for byte the same by Results.save."""
    cli_csv = sorted(p.relative_to(cli_dir) for p in cli_dir.rglob("*.csv"))
    assert cli_csv
    for f in cli_csv:
        assert (py_dir / f).read_bytes() == (cli_dir / f).read_bytes(), f


def unnumbered(svg):
    """cairo numbers the surfaces, images, glyphs, clips and patterns of its SVG files
    ("surface469", "image69") across everything a process has drawn, so two processes'
    files of one drawing differ in those numbers only."""
    return re.sub(r"\b(surface|image|glyph|clip|pattern|mask|source)[0-9-]+", r"\1", svg)


def test_figures_are_the_reports_files(softmax, tmp_path):
    kinds = "head_maps,layers_heads,rollout,entropy"
    cli("report", "--models", str(ZOO / "softmax.safetensors"), "--images", *TWO, "--analyses",
        "maps,rollout,entropy", "--query", "3,4", "--figures", kinds, "--formats", "svg,png",
        "--out", str(tmp_path / "cli"))
    r = softmax.analyze(TWO, analyses="maps,rollout,entropy", query=(3, 4))
    listed = {f["stem"]: f["kind"] for f in r.figures()}
    written = sorted((tmp_path / "cli" / "figures").glob("*.png"))
    assert written
    for png in written:  # every figure the report drew, the module draws the same
        stem = png.stem
        assert stem in listed, (stem, sorted(listed))
        figure = r.figure(stem)
        assert figure.kind == listed[stem] and figure.caption
        # The same pixels, encoded by the same writer: the same file.
        assert figure.png() == png.read_bytes(), stem
        assert figure._repr_png_() == png.read_bytes()
        svg = figure._repr_svg_()
        assert unnumbered(svg) == unnumbered(png.with_suffix(".svg").read_text()), stem
    # All of them at once, drawn side by side as the report draws them: the same files.
    saved = r.save_figures(str(tmp_path / "py"), kinds=kinds.split(","), formats=["png"])
    assert not saved["errors"] and len(saved["files"]) == len(written)
    for png in written:
        assert (tmp_path / "py" / png.name).read_bytes() == png.read_bytes(), png.name
    with pytest.raises(attnlab.UsageError, match="formats"):
        r.save_figures(str(tmp_path / "py"), formats=["gif"])
    # A kind drawn once per image needs the image; a wrong name lists what there is.
    with pytest.raises(attnlab.UsageError, match="image="):
        r.figure("rollout")
    boot = r.figure("rollout", image="09-ankle-boot-00000")
    assert boot.stem == "rollout__softmax__09-ankle-boot-00000"
    with pytest.raises(attnlab.UsageError, match="rollout__softmax"):
        r.figure("nothing")
    with pytest.raises(attnlab.UsageError, match="alpha"):
        r.figure("entropy", alpha=2)
    with pytest.raises(attnlab.UsageError, match="unknown keyword 'colour'"):
        r.figure("entropy", colour="red")
    # Another view is another figure: head 1 instead of the head mean.
    layers = r.figure("layers_heads", image="09-ankle-boot-00000")
    assert r.figure("layers_heads", image="09-ankle-boot-00000", norm="divmax").png() != layers.png()
    # Saved in the format its extension names; a file with no known extension is refused.
    path = boot.save(str(tmp_path / "rollout.pdf"))
    assert open(path, "rb").read(5) == b"%PDF-"
    with pytest.raises(attnlab.UsageError, match="extension"):
        boot.save(str(tmp_path / "rollout.jpeg"))
    assert not (tmp_path / "rollout.jpeg").exists()


def test_faithfulness_is_the_clis(softmax, tmp_path):
    args = dict(maps="rollout,random,centre", step=0.25, batch=8, seed=3)
    cli("faithfulness", "--models", str(ZOO / "softmax.safetensors"), "--images", *TWO,
        "--maps", args["maps"], "--step", "0.25", "--batch", "8", "--seed", "3",
        "--out", str(tmp_path / "cli"))
    r = softmax.faithfulness(TWO, **args)
    assert set(r.tables) >= {"faithfulness_images", "faithfulness_curves", "faithfulness",
                             "faithfulness_randomisation", "faithfulness_randomisation_summary"}
    assert sorted(set(r.tables["faithfulness"]["map"])) == ["centre", "random", "rollout"]
    r.save(str(tmp_path / "py"))
    same_csv_files(tmp_path / "cli", tmp_path / "py")
    for stem in ("faithfulness__faithfulness_curves", "faithfulness__faithfulness_scoreboard"):
        png = (tmp_path / "cli" / (stem + ".png")).read_bytes()
        assert r.figure(stem).png() == png, stem
    assert r.metadata["randomisation"] and r.metadata["maps"] == ["rollout", "random", "centre"]
    with pytest.raises(attnlab.UsageError, match="maps"):
        softmax.faithfulness(TWO, maps="cls,saliency")
    with pytest.raises(attnlab.UsageError, match="step"):
        softmax.faithfulness(TWO, step=0.9)
    with pytest.raises(attnlab.UsageError, match="baseline"):
        softmax.faithfulness(TWO, baseline="noise")


def test_faithfulness_stops_when_asked(softmax):
    with pytest.raises(attnlab.Cancelled):
        softmax.faithfulness(TWO, maps="rollout", randomisation=False, progress=lambda d, t: d < 1)


def test_complexity_is_the_clis(tmp_path):
    cli("complexity", "--mechanism", "softmax,hilo", "--tokens", "196", "28x28",
        "--option", "hilo.alpha=0.5", "--out", str(tmp_path / "cli"))
    r = attnlab.complexity(mechanism=["softmax", "hilo"], tokens=[196, "28x28"],
                           options={"hilo.alpha": 0.5})
    r.save(str(tmp_path / "py"))
    same_csv_files(tmp_path / "cli", tmp_path / "py")
    totals = r.tables["complexity_totals"]
    assert list(totals["tokens"]) == [196, 784, 196, 784]
    # The same drawing: equal SVG text but for cairo's per-process numbering.
    svg = (tmp_path / "cli" / "mechanisms__complexity_macs.svg").read_text()
    assert unnumbered(r.figure("complexity").svg()) == unnumbered(svg)
    m = attnlab.complexity(model=str(ZOO / "softmax.safetensors"), img_size=[28, (28, 56)])
    assert list(m.tables["complexity_totals"]["width"]) == [28, 56]
    with pytest.raises(attnlab.UsageError, match="model= or mechanism="):
        attnlab.complexity()
    with pytest.raises(attnlab.UsageError, match="tokens"):
        attnlab.complexity(mechanism="softmax", tokens="196,28x28")  # one grid per item
    with pytest.raises(attnlab.UsageError, match="no option"):
        attnlab.complexity(mechanism="hilo", options={"hilo.colour": 1})


def test_bench_attention_measures_against_its_baseline():
    r = attnlab.bench_attention(mechanisms=["softmax", "linear"], sides=[4, 6], dim=32,
                                heads=2, repeats=2, peaks=False)
    t = r.tables["attention_bench"]
    # LibTorch >= 2.0 also measures the softmax layer through its fused kernel (an "sdpa" row
    # and the columns against it); PyPI's torch always is such a LibTorch.
    fused = "latency_vs_sdpa" in t
    assert fused or attnlab.TORCH_VERSION is None
    per_grid = ["softmax", "linear"] + (["sdpa"] if fused else [])
    assert list(t["mechanism"]) == per_grid * 2
    assert np.all(t["latency_ms"] > 0)
    softmax_rows = np.array(t["mechanism"]) == "softmax"
    assert np.allclose(t["latency_vs_softmax"][softmax_rows], 1.0)  # itself, measured once
    assert {f["kind"] for f in r.figures()} >= {"bench_latency"}
    assert r.figure("bench_latency").caption
    with pytest.raises(attnlab.AttnlabError, match="nosuch"):
        attnlab.bench_attention(mechanisms="nosuch")
    with pytest.raises(attnlab.UsageError, match="sides"):
        attnlab.bench_attention(mechanisms="softmax", sides=[0])


def test_tensors_leave_through_dlpack(softmax, boot):
    traces = softmax.trace(boot)
    logits = traces.logits_tensor
    # attnlab.Tensor, or in the torch world the torch.Tensor torch.from_dlpack made of it
    # (test_torch_interop.py checks that it shares the engine's memory).
    kind = attnlab.Tensor if attnlab.TORCH_VERSION is None else sys.modules["torch"].Tensor
    assert isinstance(logits, kind)
    assert logits.__dlpack_device__() == (1, 0)  # kDLCPU
    taken = np.from_dlpack(logits)  # no copy: numpy reads the engine's buffer
    assert taken.shape == tuple(logits.shape) and np.array_equal(taken[0], traces.logits)
    assert np.array_equal(logits.numpy(), taken)
    logits.__dlpack__()  # a capsule nobody takes frees its tensor when it dies
    layer = traces.tensors(0)
    assert layer and all(isinstance(t, kind) for t in layer.values())
    for name, t in layer.items():
        assert np.from_dlpack(t).shape == tuple(t.shape), name
    with pytest.raises(attnlab.UsageError, match="layer"):
        traces.tensors(99)
    r = softmax.analyze(boot, analyses="maps", progress=False)
    for key, t in r.tensors.items():  # the arrays as tensors over the same buffers
        assert isinstance(t, kind) and np.from_dlpack(t).ctypes.data == r.arrays[key].ctypes.data
    try:
        import torch
    except ImportError:
        return
    assert torch.equal(torch.from_dlpack(logits)[0], torch.from_numpy(traces.logits))
