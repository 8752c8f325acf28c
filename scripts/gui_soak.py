#!/usr/bin/env python3
"""Writes a random but valid GUI script (app/gui/script/gui_script.h) for the soak test: opens and
closes models and images, clicks, tabs, layouts, map kinds, exports, cancels, series loads,
what-if edits (strokes, pastes, Undo, Clear, the difference view),
input-size changes and waits, in a mix drawn from a seeded generator. The same seed and
length give the same script, byte for byte, so a failing soak reruns exactly.

Every command is valid where it is placed: the generator tracks what is open (opens and
closes take effect a frame later, so each is followed by `frames 1`), names models and
images by index, exports only after the work has finished, and checks after each wait
that no error is shown, except right after it opened a broken image, where it expects one
and closes that image again. At most 4 models and 6 images are open at once, so resident
memory has a steady state to reach.

Usage: gui_soak.py --seed S --actions N --root REPO --out DIR [--tabs a,b,c] > soak.script
  DIR receives the exports and must hold broken.png, a damaged image the script opens now
  and then (an expected error); --tabs lists the tab ids to visit (default: those below).
"""
import argparse
import os
import random

ZOO_MODELS = ["softmax", "hilo", "linear", "rala", "anchor", "castling", "sra", "swin", "xca",
              "flatten", "hydra", "efficient", "efficientvit"]
SERIES = {"linear", "castling"}  # models with a training series beside them
FIXED_SIZE = {"flatten"}  # its positional encoding is built for 14 x 14 tokens only
DEFAULT_TABS = ["maps", "maps", "spectra", "rank", "anchors", "mask", "channel_maps", "locality",
                "entropy", "map_rank", "outliers", "predictions", "cost"]
MAX_MODELS, MAX_IMAGES = 4, 6
GRID = 14  # the zoo models' 28-pixel inputs in 2-pixel patches


class Soak:
    def __init__(self, seed, root, out, tabs):
        self.rng = random.Random(seed)
        self.root, self.out, self.tabs = root, out, tabs
        images = os.path.join(root, "assets", "fashion-mnist")
        self.image_files = sorted(os.path.join(images, f) for f in os.listdir(images)
                                  if f.endswith(".png"))
        self.bad_image = os.path.join(out, "broken.png")  # the runner writes it: a cut PNG
        self.models = []  # zoo names, in list order
        # Per model: "pending" (opened since the last wait), "sure" (a wait followed its
        # open) or "unsure" (a Cancel came first: it drops queued loads, so it may have
        # failed). Input sizes and series go only to models sure to be loaded.
        self.loaded = []
        self.images = []  # paths, in list order
        self.model, self.image = 0, 0  # shown (indices)
        self.lines = []
        self.exports = 0

    def emit(self, *lines):
        self.lines.extend(lines)

    def wait(self):
        self.emit("wait-idle 600", "expect-no-error")
        self.loaded = ["sure" if s == "pending" else s for s in self.loaded]

    # Each action returns the number of script actions it counts as (0: not possible now).
    def open_model(self):
        if len(self.models) >= MAX_MODELS:
            return self.close_model()
        name = self.rng.choice(ZOO_MODELS)
        self.emit(f"open-model {self.root}/models/zoo/{name}.safetensors", "frames 1")
        self.models.append(name)
        self.loaded.append("pending")
        return 1

    def open_image(self):
        if len(self.images) >= MAX_IMAGES:
            return self.close_image()
        path = self.rng.choice(self.image_files)
        self.emit(f"open-image {path}", "frames 1")
        if path not in self.images:  # an image already open is shown, not opened again
            self.images.append(path)
        self.image = self.images.index(path)
        return 1

    def open_broken_image(self):
        if len(self.images) >= MAX_IMAGES:
            return 0
        self.emit(f"open-image {self.bad_image}", "frames 1", "wait-idle 600", "expect-error",
                  f"close-image {len(self.images)}", "frames 1")
        self.image = min(self.image, max(0, len(self.images) - 1))
        return 2

    def close(self, items, shown):
        k = self.rng.randrange(len(items))
        items.pop(k)
        # close_slots.cpp: the shown entry stays shown (moved up), or its neighbour.
        if shown > k:
            shown -= 1
        elif shown == k:
            shown = min(k, max(0, len(items) - 1))
        return k, shown

    def close_model(self):
        if not self.models:
            return 0
        k, self.model = self.close(self.models, self.model)
        self.loaded.pop(k)
        self.emit(f"close-model {k}", "frames 1")
        return 1

    def close_image(self):
        if not self.images:
            return 0
        k, self.image = self.close(self.images, self.image)
        self.emit(f"close-image {k}", "frames 1")
        return 1

    def select_model(self):
        if not self.models:
            return 0
        self.model = self.rng.randrange(len(self.models))
        self.emit(f"select-model {self.model}")
        return 1

    def select_image(self):
        if not self.images:
            return 0
        self.image = self.rng.randrange(len(self.images))
        self.emit(f"select-image {self.image}")
        return 1

    def view(self):
        r = self.rng
        choice = r.randrange(11)
        if choice == 0:
            self.emit(f"tab {r.choice(self.tabs)}")
        elif choice == 1:
            self.emit(f"layout {r.choice(['single', 'compare'])}")
        elif choice == 2:
            self.emit(f"heads-grid {r.choice(['on', 'off'])}")
        elif choice == 3:
            self.emit(f"layer {r.randrange(4)}")
        elif choice == 4:
            self.emit(f"head {r.randrange(2)}")
        elif choice == 5:
            self.emit(f"map {r.choice(['query', 'query', 'cls', 'rollout', 'gradcam'])}")
        elif choice == 6:
            self.emit(f"colormap {r.choice(['viridis', 'magma', 'inferno', 'gray'])}")
        elif choice == 7:
            self.emit(f"fusion {r.choice(['mean', 'max', 'min'])}")
        elif choice == 8:
            self.emit(f"norm {r.choice(['minmax', 'divmax'])}")
        elif choice == 9:
            self.emit(f"alpha {r.choice(['0.3', '0.6', '0.9'])}")
        else:
            self.emit(f"shared-scale {r.choice(['on', 'off'])}")
        return 1

    def click(self):
        self.emit(f"click-token {self.rng.randrange(GRID)} {self.rng.randrange(GRID)}")
        return 1

    def frames(self):
        self.emit(f"frames {self.rng.randint(1, 5)}")
        return 1

    def cancel(self):
        # Cancel whatever runs; the cancelled analyses run again on request.
        self.emit("cancel", "frames 2", "reanalyse", "frames 1")
        self.loaded = ["unsure" if s == "pending" else s for s in self.loaded]
        return 2

    def export(self):
        sure = [k for k, s in enumerate(self.loaded) if s == "sure"]
        if not sure or not self.images:
            return 0
        self.exports += 1
        kind = self.rng.choice(["png", "svg", "pdf", "stats"])
        self.model = self.rng.choice(sure)  # a model whose load a Cancel may have dropped has nothing to export
        self.emit(f"select-model {self.model}", "reanalyse", "frames 1", "tab maps", "map query",
                  "wait-idle 600", "expect-no-error")
        if kind == "stats":
            self.emit(f"export-stats {self.out}/stats-{self.exports}")
        else:
            self.emit(f"export-panel {self.out}/panel-{self.exports}.{kind}")
        return 1

    def series(self):
        if (not self.models or not self.images or self.models[self.model] not in SERIES or
                self.loaded[self.model] != "sure"):
            return 0
        self.emit(f"select-model {self.model}", "load-series", "frames 2")
        return 1

    def img_size(self):
        size = self.rng.choice([28, 32, 40])
        self.wait()
        sure = [k for k, s in enumerate(self.loaded) if s == "sure"]
        if not sure:
            return 1  # the wait
        k = self.rng.choice(sure)
        if self.models[k] in FIXED_SIZE:
            size = 28
        self.emit(f"img-size {k} {size} {size}", "frames 1")
        return 1

    def edit(self):
        # What-if edits of the shown image: a stroke (with a drag), a paste from an open
        # image, Undo or Clear, or the edited - original view. A stroke needs the shown
        # model's analysis, so it waits for it.
        sure = [k for k, s in enumerate(self.loaded) if s == "sure"]
        if not sure or not self.images:
            return 0
        r = self.rng
        self.model = r.choice(sure)
        cell = lambda: f"{r.randrange(GRID)} {r.randrange(GRID)}"  # noqa: E731
        self.emit(f"select-model {self.model}", "reanalyse", "frames 1", "wait-idle 600",
                  "expect-no-error", "edit on")
        kind = r.randrange(4)
        if kind == 0:
            self.emit(f"edit-tool {r.choice(['occlude', 'blur', 'paint'])}",
                      f"brush {r.randint(1, 4)}", f"paint {cell()}", f"paint-drag {cell()}")
        elif kind == 1:
            self.emit("edit-tool paste", f"paste-from {r.randrange(len(self.images))}",
                      f"paint {cell()}")
        elif kind == 2:
            self.emit(r.choice(["undo", "undo", "clear-edits"]))
        else:
            self.emit(f"edit-difference {r.choice(['on', 'off'])}")
        self.emit("frames 1", "edit off")
        return 1

    def generate(self, actions):
        mix = [(self.open_model, 5), (self.open_image, 5), (self.close_model, 3),
               (self.close_image, 3), (self.select_model, 5), (self.select_image, 5),
               (self.view, 20), (self.click, 12), (self.frames, 8), (self.wait, 3),
               (self.cancel, 2), (self.export, 2), (self.series, 1), (self.img_size, 1),
               (self.open_broken_image, 1), (self.edit, 3)]
        actions_fn, weights = zip(*mix)
        done = 0
        self.emit(f"# gui soak: {actions} actions", "wait-idle 600")
        while done < actions:
            action = self.rng.choices(actions_fn, weights)[0]
            count = action()
            done += 1 if count is None else count
        self.wait()
        self.emit("quit")
        return "\n".join(self.lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--actions", type=int, required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tabs", default=",".join(DEFAULT_TABS))
    a = p.parse_args()
    soak = Soak(a.seed, os.path.realpath(a.root), a.out, a.tabs.split(","))
    print(soak.generate(a.actions), end="")


if __name__ == "__main__":
    main()
