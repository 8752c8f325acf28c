"""The references beside `attnlab project` in bench/dataset/glance.sh: scikit-learn's PCA and
TSNE (perplexity 30, PCA init, learning rate 'auto', as attnlab's defaults) and umap-learn
(15 neighbours, min_dist 0.1) on an embed folder's embeddings, timed, and sklearn's
trustworthiness (k = 10) of theirs and of attnlab's projection_*.npy in the same folder."""
import sys
import time

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE, trustworthiness

folder = sys.argv[1]
x = np.load(f"{folder}/embeddings.npy").astype(np.float32)
t = time.time()
PCA(2).fit_transform(x)
print(f"sklearn PCA: {time.time() - t:.2f} s")
t = time.time()
tsne = TSNE(2, perplexity=30, init="pca", learning_rate="auto", random_state=0, n_jobs=2)
y = tsne.fit_transform(x)
print(f"sklearn TSNE: {time.time() - t:.1f} s, KL {tsne.kl_divergence_:.4f} (its Barnes-Hut estimate)")
import umap  # noqa: E402 (its numba start-up is part of what it costs)
t = time.time()
u = umap.UMAP(n_neighbors=15, min_dist=0.1, random_state=0).fit_transform(x)
print(f"umap-learn: {time.time() - t:.1f} s (numba compilation included)")
for name, a in (("attnlab t-SNE", np.load(f"{folder}/projection_tsne.npy")), ("sklearn TSNE", y),
                ("attnlab UMAP", np.load(f"{folder}/projection_umap.npy")), ("umap-learn", u)):
    print(f"{name}: trustworthiness(10) {trustworthiness(x, a, n_neighbors=10):.4f}")
