"""CLIP's tokenizer from Python (attnlab.clip_tokenize): every reference case of
../shared/fixtures/clip/tokenizer_cases.json gives clip.tokenize's 77 ids, as numpy int64;
too-long texts refused with truncate=False by the reference's message; bad input refused."""
import json

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
