import pytest

from structbench.lm.vocab import synthetic_vocabulary
from structbench.masking import index_vocabulary


@pytest.fixture(scope="module")
def vocab():
    """Llama 3's vocabulary where its wheel is installed (else a synthetic one of 32,000 tokens), indexed."""
    from structbench.lm.real_vocab import MissingVocabulary, real_vocabulary

    try:
        vocab = real_vocabulary("llama3")
    except MissingVocabulary:
        vocab = synthetic_vocabulary(32_000)
    index_vocabulary(vocab)
    return vocab
