"""CLIP in words from Python: attnlab.clip_tokenize gives clip.tokenize's 77 ids for every
reference case of ../shared/fixtures/clip/tokenizer_cases.json (numpy int64; too-long texts
refused with truncate=False by the reference's message), and Model.text_map gives each text's
map and score in an image, the same maps as `attnlab analyze --text`."""
import json
import os
import subprocess

import numpy as np
import pytest

import attnlab
from conftest import ROOT

CASES = ROOT.parent / "shared" / "fixtures" / "clip" / "tokenizer_cases.json"


@pytest.fixture(scope="module")
def cases():
    if not CASES.exists():
        pytest.skip(f"no {CASES}")
    return json.loads(CASES.read_text(encoding="utf-8"))["cases"]


def test_every_reference_case_gives_clips_ids(cases):
    ids = attnlab.clip_tokenize([c["text"] for c in cases])
    assert ids.dtype == np.int64 and ids.shape == (len(cases), 77)
    for row, case in zip(ids, cases):
        assert row.tolist() == case["tokenize"], case["text"]
    # One string is one row.
    assert attnlab.clip_tokenize(cases[0]["text"]).tolist() == [cases[0]["tokenize"]]


def test_too_long_texts_and_bad_input_are_refused(cases):
    long = next(c for c in cases if c["truncated"])
    with pytest.raises(attnlab.UsageError, match="too long for context length 77"):
        attnlab.clip_tokenize([long["text"]], truncate=False)
    assert attnlab.clip_tokenize([long["text"]], truncate=True)[0, -1] == 49407
    with pytest.raises(attnlab.UsageError, match="strings"):
        attnlab.clip_tokenize(["a cat", 3])
    short = attnlab.clip_tokenize(["a cat"], context_length=4)
    assert short.shape == (1, 4) and short[0, 0] == 49406 and short[0, -1] == 49407


def test_text_map_gives_each_texts_map_and_score(tmp_path):
    mini = ROOT.parent / "shared" / "fixtures" / "parity" / "clip_full_mini.safetensors"
    if not mini.exists():
        pytest.skip(f"no {mini}")
    model = attnlab.load(str(mini))
    image = str(ROOT / "assets" / "demo.png")
    out = model.text_map(image, ["a photo of a cat", "a dog"])
    assert out["texts"] == ["a photo of a cat", "a dog"]
    assert out["maps"].shape == (2, 4, 4) and np.all(np.abs(out["maps"]) <= 1 + 1e-5)
    assert out["logits"].shape == (2,)
    assert abs(float(out["probabilities"].sum()) - 1) < 1e-5
    # The logits are exp(logit_scale) (100 in the fixture) times the image-text cosine.
    assert np.all(np.abs(out["logits"]) <= 100 + 1e-3)
    # The same maps as `attnlab analyze --text` writes.
    cli = os.environ.get("ATTNLAB_CLI")
    if cli:
        subprocess.run([cli, "--threads", "1", "analyze", "--checkpoint", str(mini), "--text",
                        "a photo of a cat", "--text", "a dog", "--images", image, "--analyses",
                        "prompts", "--out", str(tmp_path)], check=True, capture_output=True)
        written = np.load(tmp_path / "prompts" / "clip_full_mini__prompts__demo__cosine.npy")
        np.testing.assert_allclose(out["maps"], written, atol=1e-6)
    with pytest.raises(attnlab.UsageError, match="strings"):
        model.text_map(image, ["a cat", 3])


def test_text_map_refuses_an_image_only_model(softmax, boot):
    with pytest.raises(attnlab.ModelError, match="reads images only"):
        softmax.text_map(boot, ["a cat"])
