"""attnlab from Python: the engine of the attnlab CLI and GUI (C++, LibTorch) as a module.

    import attnlab
    model = attnlab.load("models/zoo/softmax.safetensors")   # or a preset, .pth, config
    res = model.analyze("assets/fashion-mnist", analyses=["rank", "entropy"])
    res.tables["rank"]          # columns as numpy arrays
    res.to_pandas("rank")       # a DataFrame, when pandas is installed
    res.arrays                  # float32 numpy arrays by result key (no copy)
    res.save("out")             # the files `attnlab analyze --out out` writes
    tr = model.trace("boot.png")                 # one forward, the traces kept
    tr.query_map(layer=-1, query=(3, 4))         # a query's map from them, in milliseconds
    model.query_map("boot.png", layer=-1, query=(3, 4))   # the same in one call
    res.figure("rollout")       # the CLI's figure, shown inline in a notebook
    model.faithfulness("assets/fashion-mnist")   # the faithfulness scoreboard
    attnlab.complexity(mechanism=["softmax", "hilo"], tokens=[196, 784])
    attnlab.bench_attention(mechanisms=["softmax", "linear"], sides=[14, 28])

Errors are attnlab.AttnlabError and its kinds (UsageError, ModelError, IoError,
Cancelled). Work runs with the GIL released; Ctrl-C stops it (KeyboardInterrupt).
Built against the environment's torch (`pip install . --no-build-isolation`), images may be
torch tensors and tensors come back as torch.Tensor (TORCH_VERSION names that torch; None
for a module built against Debian's LibTorch). docs/PYTHON.md has the walkthrough.
"""
import importlib.metadata

from ._build import TORCH_VERSION


def _require_built_torch():
    """Refuses, by name, a torch other than the one the extension was linked against: its
    libtorch would be loaded beside (or instead of) the other's, which fails at import with
    undefined symbols at best and computes wrongly at worst."""
    if TORCH_VERSION is None:
        return
    try:
        found = "torch " + importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        found = "no torch"
    if found != "torch " + TORCH_VERSION:
        raise ImportError(f"attnlab was built against torch {TORCH_VERSION}, and this environment "
                          f"has {found}: reinstall attnlab into it (pip install . "
                          "--no-build-isolation, in attnlab's source folder)")


_require_built_torch()

from ._attnlab import (  # noqa: E402,F401 (after the check: loading it loads libtorch)
    AttnlabError, Cancelled, Figure, IoError, Model, ModelError, Results, Tensor, Traces,
    UsageError, analyses, bench_attention, clip_tokenize, complexity, load, mechanisms, presets,
    set_threads, threads)

from .embeddings import Embeddings, embed, open_embeddings  # noqa: E402

__all__ = ["AttnlabError", "Cancelled", "Embeddings", "Figure", "IoError", "Model", "ModelError",
           "Results", "TORCH_VERSION", "Tensor", "Traces", "UsageError", "analyses",
           "bench_attention", "clip_tokenize", "complexity", "embed", "load", "mechanisms",
           "open_embeddings", "presets", "set_threads", "threads"]


def _to_pandas(self, name):
    """Table `name` as a pandas DataFrame (pandas must be importable)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("Results.to_pandas needs pandas (apt-get install python3-pandas)") from e
    tables = self.tables
    if name not in tables:
        raise KeyError(f"no table {name!r}; the tables are {sorted(tables)}")
    return pandas.DataFrame(tables[name])


def _progress(progress):
    """The callback to use: the one given, none for False, else a tqdm bar when tqdm is
    importable."""
    if progress is False:
        return None
    return _tqdm_progress() if progress is None else progress


def _tqdm_progress():
    """A progress callback drawing a tqdm bar, or None when tqdm is not importable."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = {}

    def report(done, total):
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, unit="img", desc="attnlab")
        b = bar["bar"]
        b.update(done - b.n)
        if done >= total:
            b.close()
    return report


_analyze = Model.analyze
_faithfulness = Model.faithfulness


def _analyze_with_progress(self, images, analyses=None, query=None, layers=None, edits=None,
                           progress=None, **options):
    return _analyze(self, images, analyses=analyses, query=query, layers=layers, edits=edits,
                    progress=_progress(progress), **options)


_analyze_with_progress.__doc__ = _analyze.__doc__ + (
    "\n\nprogress: callable(done, total); returning False stops the run (attnlab.Cancelled). "
    "Default: a tqdm bar when tqdm is importable; False: none.")


def _faithfulness_with_progress(self, images, maps=None, step=0.05, baseline="blur", batch=32,
                                randomisation=True, seed=1, progress=None):
    return _faithfulness(self, images, maps=maps, step=step, baseline=baseline, batch=batch,
                         randomisation=randomisation, seed=seed, progress=_progress(progress))


_faithfulness_with_progress.__doc__ = _faithfulness.__doc__


def _query_map(self, image, layer=-1, query=None, head=None, fusion="mean"):
    """The attention map of a query in one image: one forward, then Traces.query_map.
    For several queries of one image, keep `model.trace(image)` and ask it: each query then
    costs milliseconds, not a forward."""
    return self.trace(image).query_map(layer=layer, query=query, head=head, fusion=fusion)
Results.to_pandas = _to_pandas
Model.analyze = _analyze_with_progress
Model.faithfulness = _faithfulness_with_progress
Model.query_map = _query_map
