"""Shared set-up of the Python module's tests (ctest python_module): one LibTorch thread,
as the CLI runs them in the equality test (its --threads 1), and the repository's paths."""
import os
import pathlib

import pytest

import attnlab

attnlab.set_threads(1)
ROOT = pathlib.Path(os.environ.get("ATTNLAB_ROOT", pathlib.Path(__file__).resolve().parents[2]))
ZOO = ROOT / "models" / "zoo"
IMAGES = ROOT / "assets" / "fashion-mnist"


@pytest.fixture(scope="session")
def softmax():
    return attnlab.load(str(ZOO / "softmax.safetensors"))


@pytest.fixture(scope="session")
def boot():
    return str(IMAGES / "09-ankle-boot-00000.png")
