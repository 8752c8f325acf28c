"""`import attnlab` beside PyTorch, in the world where the module is built against the
environment's torch (docs/PYTHON.md, "Beside PyTorch"): both import orders load one libtorch,
torch tensors are images (an H×W×3 uint8 picture, a preprocessed N×3×H×W float batch, on the
CPU or CUDA), and the tensors the module returns are torch.Tensor sharing the engine's
memory. Skipped, with the reason, where the module was built against another LibTorch
(Debian's) or torch is not importable."""
import importlib.metadata
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import attnlab
from conftest import ZOO

if attnlab.TORCH_VERSION is None:
    pytest.skip("the module was built against Debian's LibTorch, not this environment's torch",
                allow_module_level=True)
torch = pytest.importorskip("torch", reason="torch is not importable in this Python")

# Run in a fresh interpreter (the import order only matters in a new process): one analysis
# of a torch tensor, a torch computation, then the libtorch files the process mapped.
ORDER_PROBE = """
import json, os, sys
for name in sys.argv[1].split(","):
    __import__(name)
import attnlab, torch
model = attnlab.load(sys.argv[2])
res = model.analyze(torch.zeros(28, 28, 3, dtype=torch.uint8), analyses="entropy", progress=False)
with open("/proc/self/maps") as f:
    mapped = sorted({line.split()[-1] for line in f
                     if "/libtorch_cpu.so" in line or "/libc10.so" in line})
print(json.dumps({"mapped": mapped, "torch_lib": os.path.join(os.path.dirname(torch.__file__), "lib"),
                  "sum": float((torch.ones(3) * 2).sum()), "images": len(res.metadata["images"])}))
"""


@pytest.mark.parametrize("order", ["torch,attnlab", "attnlab,torch"])
def test_both_import_orders_share_torchs_libtorch(order):
    env = dict(os.environ)
    # This attnlab, wherever it was imported from (the build tree or site-packages).
    here = os.path.dirname(os.path.dirname(attnlab.__file__))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", ORDER_PROBE, order, str(ZOO / "softmax.safetensors")],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, f"{order}: exit {out.returncode}\n{out.stderr[-3000:]}"
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe["sum"] == 6.0 and probe["images"] == 1
    # One libtorch_cpu and one libc10, both torch's own: never Debian's beside them.
    assert len(probe["mapped"]) == 2, probe["mapped"]
    torch_lib = os.path.realpath(probe["torch_lib"])
    assert all(os.path.realpath(os.path.dirname(p)) == torch_lib for p in probe["mapped"]), probe


def pictures(n, seed=0):
    return [np.random.default_rng(seed + k).integers(0, 256, size=(28, 28, 3), dtype=np.uint8)
            for k in range(n)]


def preprocessed(model, rgbs):
    """The model's input for 28×28 pictures, made with torch by the engine's own operations
    (core/image/preprocess.cpp; the zoo model's resize and crop leave 28×28 as it is)."""
    p = model.describe()["config"]["preprocessing"]
    assert p["resize"] == 28 and p["crop"] == 28, p
    mean = torch.tensor(p["mean"], dtype=torch.float32).view(3, 1, 1)
    std = torch.tensor(p["std"], dtype=torch.float32).view(3, 1, 1)
    return torch.stack([torch.from_numpy(x).permute(2, 0, 1).to(torch.float32).div(255).sub(mean)
                        .div(std) for x in rgbs])


def same_tables(a, b):
    for name, columns in a.tables.items():
        for col, values in columns.items():
            if col == "image":
                continue
            other = b.tables[name][col]
            if isinstance(values, list):
                assert values == other, (name, col)
            else:
                assert np.array_equal(values, other, equal_nan=True), (name, col)


def test_a_uint8_tensor_is_a_picture(softmax):
    rgb = pictures(1)[0]
    from_array = softmax.analyze(rgb, analyses="rank,entropy", progress=False)
    from_tensor = softmax.analyze(torch.from_numpy(rgb), analyses="rank,entropy", progress=False)
    same_tables(from_array, from_tensor)
    assert [i["tag"] for i in from_tensor.metadata["images"]] == ["tensor0"]


def test_a_preprocessed_batch_goes_straight_to_the_model(softmax):
    rgbs = pictures(2)
    batch = preprocessed(softmax, rgbs)
    from_arrays = softmax.analyze(rgbs, analyses="rank,entropy,maps", query=(3, 4), progress=False)
    from_batch = softmax.analyze(batch, analyses="rank,entropy,maps", query=(3, 4), progress=False)
    assert [i["tag"] for i in from_batch.metadata["images"]] == ["tensor0", "tensor1"]
    same_tables(from_arrays, from_batch)  # the same input, bit for bit, so the same values
    for key, a in from_arrays.arrays.items():
        assert np.array_equal(a, from_batch.arrays[key.replace("array", "tensor")]), key
    # The other entry points take it too: one image of it, or the batch.
    traces = softmax.trace(batch[1:])
    assert np.array_equal(traces.logits, softmax.trace(rgbs[1]).logits)
    assert [a["top"] for a in softmax.classify(batch)] == [a["top"] for a in softmax.classify(rgbs)]


def test_a_bad_tensor_is_refused_by_name(softmax):
    with pytest.raises(attnlab.UsageError, match=r"images\[0\]: a preprocessed batch for this model "
                                                 r"is N×3×28×28 .*not \(1, 3, 32, 32\)"):
        softmax.analyze(torch.zeros(1, 3, 32, 32), progress=False)
    with pytest.raises(attnlab.UsageError, match=r"H×W×3 uint8 .* not torch.int64 of shape \(28, 28, 3\)"):
        softmax.analyze(torch.zeros(28, 28, 3, dtype=torch.int64), progress=False)
    with pytest.raises(attnlab.UsageError, match="empty batch"):
        softmax.analyze(torch.zeros(0, 3, 28, 28), progress=False)
    with pytest.raises(attnlab.UsageError, match="edits: tensor0 is a preprocessed tensor"):
        softmax.analyze(torch.zeros(1, 3, 28, 28), edits="occlude:3,3,2", progress=False)
    with pytest.raises(attnlab.UsageError, match=r"__dlpack__\(\) failed: .*require.* grad"):
        softmax.analyze(torch.zeros(1, 3, 28, 28, requires_grad=True), progress=False)


def test_tensors_come_back_as_torch_tensors_without_a_copy(softmax):
    res = softmax.analyze(pictures(1)[0], analyses="maps", query=(3, 4), progress=False)
    tensors = res.tensors
    assert set(tensors) == set(res.arrays)
    key = next(iter(tensors))
    t, a = tensors[key], res.arrays[key]
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and tuple(t.shape) == a.shape
    assert t.data_ptr() == a.ctypes.data  # the results' own buffer
    t.fill_(7.0)  # a write through the tensor is seen by the numpy view and by a new tensor
    assert (a == 7.0).all() and (res.tensors[key] == 7.0).all()

    traces = softmax.trace(pictures(1)[0])
    logits = traces.logits_tensor
    assert isinstance(logits, torch.Tensor) and logits.device.type == "cpu"
    assert np.array_equal(logits[0].numpy(), traces.logits)
    again = traces.logits_tensor  # the engine's tensor both times, not a copy each
    assert again.data_ptr() == logits.data_ptr()
    logits.zero_()
    assert (again == 0).all()
    layer = traces.tensors(0)
    assert layer and all(isinstance(v, torch.Tensor) for v in layer.values())
    name = next(iter(layer))
    assert traces.tensors(0)[name].data_ptr() == layer[name].data_ptr()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensors_in_and_out():
    rgbs = pictures(2)
    on_cpu = attnlab.load(str(ZOO / "softmax.safetensors"))
    batch = preprocessed(on_cpu, rgbs)
    # A CUDA batch into a CPU model: moved to the model's device, the same values.
    same_tables(on_cpu.analyze(rgbs, analyses="entropy", progress=False),
                on_cpu.analyze(batch.cuda(), analyses="entropy", progress=False))
    on_gpu = attnlab.load(str(ZOO / "softmax.safetensors"), device="cuda")
    traces = on_gpu.trace(batch[:1].cuda())
    logits = traces.logits_tensor
    assert isinstance(logits, torch.Tensor) and logits.device.type == "cuda"
    assert traces.logits_tensor.data_ptr() == logits.data_ptr()
    # The device's answer is the CPU's within float32 rounding.
    expected = torch.from_numpy(on_cpu.trace(rgbs[0]).logits)
    assert torch.allclose(logits[0].cpu(), expected, rtol=1e-4, atol=1e-4)
    assert on_gpu.analyze(batch.cuda(), analyses="entropy", progress=False).tables["entropy_heads"]


def test_another_torch_is_refused_by_name(tmp_path):
    # This package as if built against another torch: its __init__ refuses to load the
    # extension (whose libtorch is not this environment's) and says what to do.
    package = tmp_path / "attnlab"
    package.mkdir()
    source = os.path.dirname(attnlab.__file__)
    for name in os.listdir(source):
        if name.endswith(".so"):
            os.symlink(os.path.join(source, name), package / name)
    with open(os.path.join(source, "__init__.py")) as f:
        (package / "__init__.py").write_text(f.read())
    (package / "_build.py").write_text('TORCH_VERSION = "0.0.1"\n')
    out = subprocess.run([sys.executable, "-c", "import attnlab"], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(tmp_path)), timeout=120)
    assert out.returncode != 0
    assert ("ImportError: attnlab was built against torch 0.0.1, and this environment has torch "
            + importlib.metadata.version("torch")) in out.stderr, out.stderr[-2000:]
