#!/usr/bin/python3
"""../shared/peers/notebook_workflow.py's analyses through `import attnlab`, as a notebook
would run them: a DeiT-small-shaped ViT (random weights), for each image every layer's and
head's attention row of one query and of the CLS token, the output rank per head, the
spectra of each block's output tokens, tables and arrays saved, and the query, CLS and rank
figures as PNG + PDF. Usage: notebook_workflow.py IMAGES... --out DIR [--query 7,7]
(PYTHONPATH=build/python in a source tree; bench/peer/bench_python.py times it)."""
import argparse
import time

import attnlab

ap = argparse.ArgumentParser()
ap.add_argument("images", nargs="+")
ap.add_argument("--out", required=True)
ap.add_argument("--query", default="7,7")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--no-figures", action="store_true")
a = ap.parse_args()
attnlab.set_threads(a.threads)
t0 = time.time()
model = attnlab.load("deit_small_patch16_224", random_init=True)
query = tuple(int(v) for v in a.query.split(","))
res = model.analyze(a.images, analyses=["maps", "rank", "spectra"], query=query)
res.save(a.out)  # rank tables (CSV, JSON, LaTeX), every row and spectrum (.npy)
if not a.no_figures:  # the query's and the CLS token's rows per layer × head, the ranks
    res.save_figures(a.out, kinds=["layers_heads", "prefix_maps", "rank"], formats=["png", "pdf"],
                     dpi=100)
print(f"{len(a.images)} images in {time.time() - t0:.2f}s")
