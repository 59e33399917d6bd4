"""Grammar-constrained infill: the middle may end only where the suffix can follow.

Oracles: Python ``re.fullmatch`` for regex grammars, ``json.loads`` and Lark's own Earley parser
for the JSON grammar, Lark for the C subset; random walks over a small vocabulary with FIM tokens.
"""
import json
import random
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from constrained import Grammar, GrammarError, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, is_allowed, unpack_bitmask
from constrained.infill import InfillMatcher, detect_fim_tokens

TEXT_TOKENS = [b'{"', b'": ', b", ", b"12", b"}", b"]}", b'"a', b"int ", b"return ", b"();",
               b"  ", b"\n", b"x = ", b" + ", b"ab", b"true", b"null"]
SPECIALS = [b"<|endoftext|>", b"<fim_prefix>", b"<fim_middle>", b"<fim_suffix>", b"<fim_pad>"]
ALL = [bytes([i]) for i in range(256)] + TEXT_TOKENS + SPECIALS
EOS = len(ALL) - 5
PAD = len(ALL) - 1
VOCAB = Vocabulary.from_token_bytes(ALL, eos_token_ids=[EOS],
                                    special_token_ids=range(EOS, len(ALL)), name="fim-test")
FIM = detect_fim_tokens(VOCAB)

JSON_LARK = r"""
?start: value
?value: object | array | NUMBER | STRING | "true" | "false" | "null"
array: "[" [value ("," value)*] "]"
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
STRING: /"([^"\\\x00-\x1f]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/
%ignore /[ \t\n]+/
"""

GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"


def _mask(m):
    bm = allocate_token_bitmask(VOCAB.size)
    m.fill_next_token_bitmask(bm)
    return bm


def _walk(m, rng, steps, full_ok, prefix, suffix, stop_p=0.15):
    """Random walk over allowed tokens; at each step the end bit must equal ``full_ok``."""
    middle = b""
    for _ in range(steps):
        bm = _mask(m)
        can_end = is_allowed(bm, EOS)
        assert can_end == full_ok(prefix + middle + suffix), (prefix, middle, suffix)
        assert can_end == is_allowed(bm, PAD) == m.is_accepting()
        allowed = np.nonzero(unpack_bitmask(bm, VOCAB.size))[0].tolist()
        text = [t for t in allowed if t not in (EOS, PAD)]
        if can_end and (rng.random() < stop_p or not text):
            assert m.accept_token(rng.choice([EOS, PAD]))
            assert m.is_terminated() and not unpack_bitmask(_mask(m), VOCAB.size).any()
            return middle, True
        if not text:
            return middle, False
        tid = rng.choice(text)
        assert m.accept_token(tid)
        middle += ALL[tid]
    return middle, False


def test_fim_tokens_of_the_test_vocabulary():
    assert FIM.family == "starcoder" and PAD in FIM.end_ids and EOS in FIM.end_ids


@pytest.mark.parametrize("pattern,prefix,suffix", [
    (r'\{"a": \d+, "b": \[(\d+(, \d+)*)?\]\}', b'{"a": 1', b', "b": [2]}'),
    (r'\{"a": \d+, "b": \[(\d+(, \d+)*)?\]\}', b'{"a": ', b']}'),
    (r"(ab|x)*c", b"ab", b"xc"),
    (r"[a-z]+ = [0-9]+;", b"x", b";"),
])
def test_regex_end_rule_matches_fullmatch(pattern, prefix, suffix):
    cg = compile_grammar(Grammar.from_regex(pattern), VOCAB)
    rng = random.Random(zlib.crc32(pattern.encode() + prefix))
    full = lambda text: re.fullmatch(pattern.encode(), text) is not None  # noqa: E731
    ended = 0
    for _ in range(25):
        m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
        middle, done = _walk(m, rng, 40, full, prefix, suffix)
        if done:
            ended += 1
            assert full(prefix + middle + suffix)
    assert ended > 0


def _lark_ok(parser):
    def ok(text):
        try:
            parser.parse(text.decode("utf-8"))
            return True
        except Exception:  # lark errors and UnicodeDecodeError alike: not a sentence
            return False
    return ok


@pytest.fixture(scope="module")
def json_compiled():
    path = GRAMMARS / "json.lark"
    text = path.read_text() if path.is_file() else JSON_LARK
    return compile_grammar(Grammar.from_lark(text), VOCAB), text


@pytest.mark.parametrize("prefix,suffix", [
    (b'{"a": [1', b'], "b": 2}'),
    (b'{"a": ', b'}'),
    (b'[', b', 3]'),
    (b'{"k": "v', b'"}'),
    (b'', b''),
])
def test_json_infill_end_rule(json_compiled, prefix, suffix):
    lark = pytest.importorskip("lark")
    cg, text = json_compiled
    parser = lark.Lark(text, parser="earley", lexer="dynamic")
    lark_ok = _lark_ok(parser)

    def full(data):
        ok = lark_ok(data)
        try:
            json.loads(data)
            json_ok = True
        except ValueError:
            json_ok = False
        assert ok == json_ok, data
        return ok

    rng = random.Random(len(prefix) * 31 + len(suffix))
    for _ in range(12):
        m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
        middle, done = _walk(m, rng, 10, full, prefix, suffix, stop_p=0.3)
        if done:
            json.loads(prefix + middle + suffix)


C_FALLBACK = r"""
start: func+
func: "int" NAME "(" ")" "{" stmt* "}"
stmt: "return" expr ";" | NAME "=" expr ";" | "int" NAME "=" expr ";"
?expr: term (("+" | "-") term)*
?term: NAME | NUMBER | NAME "(" ")" | "(" expr ")"
NAME: /[a-z_][a-z0-9_]*/
NUMBER: /[0-9]+/
%ignore /[ \t\n]+/
"""


def test_c_subset_infill_end_rule():
    lark = pytest.importorskip("lark")
    path = GRAMMARS / "c_subset.lark"
    text = path.read_text() if path.is_file() else C_FALLBACK
    cg = compile_grammar(Grammar.from_lark(text), VOCAB)
    full = _lark_ok(lark.Lark(text, parser="earley", lexer="dynamic"))
    prefix = b"int main() {\n  int x = 1;\n  x = "
    suffix = b";\n  return x;\n}\n"
    assert full(prefix + b"x + 2" + suffix) and not full(prefix + b"x +" + suffix)
    rng = random.Random(7)
    for _ in range(8):
        m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
        middle, done = _walk(m, rng, 8, full, prefix, suffix, stop_p=0.4)
        if done:
            assert full(prefix + middle + suffix)


def test_rollback_forced_bytes_and_errors():
    cg = compile_grammar(Grammar.from_regex(r"abc(d|ef)ghi"), VOCAB)
    m = InfillMatcher(cg, b"a", b"ghi", end_ids=[EOS])
    assert not m.is_accepting()
    assert m.forced_bytes() == b"bc"  # then a choice
    assert m.accept_bytes(b"bc") and m.forced_bytes() == b""
    assert m.accept_token(ord("e"))
    assert m.forced_bytes() == b"f" and not m.accept_token(EOS)
    assert m.accept_token(ord("f")) and m.is_accepting()
    assert not m.accept_token(PAD)  # pad is not an end token here
    assert m.accept_token(EOS) and m.is_terminated() and not m.accept_token(ord("g"))
    m.rollback(2)
    assert not m.is_accepting() and m.forced_bytes() == b"f"
    m.reset()
    assert m.middle_steps == 0 and m.forced_bytes() == b"bc"
    with pytest.raises(ValueError):
        m.rollback(1)
    # the suffix may supply forced bytes: with suffix "fghi" the middle can stop after "e"
    m2 = InfillMatcher(cg, b"abce", b"fghi", end_ids=[EOS])
    assert m2.is_accepting() and m2.forced_bytes() == b""
    with pytest.raises(GrammarError, match="prefix"):
        InfillMatcher(cg, b"zz", b"")


def test_default_end_ids_are_eos_only():
    cg = compile_grammar(Grammar.from_regex(r"[a-z]*"), VOCAB)
    m = InfillMatcher(cg, "ab", "cd")
    bm = _mask(m)
    assert is_allowed(bm, EOS) and not is_allowed(bm, PAD)


class _RandomLM:
    """A stand-in causal LM: seeded random logits, no cache (enough for the completion loop)."""

    def __init__(self, vocab_size, seed=0):
        import torch
        self.torch = torch
        self.size = vocab_size
        self.gen = torch.Generator().manual_seed(seed)

    def get_output_embeddings(self):
        return None

    @property
    def config(self):
        from types import SimpleNamespace
        return SimpleNamespace(vocab_size=self.size)

    def __call__(self, input_ids, past_key_values=None, use_cache=True):
        from types import SimpleNamespace
        n = input_ids.shape[1]
        logits = self.torch.randn(1, n, self.size, generator=self.gen)
        return SimpleNamespace(logits=logits, past_key_values=None)


class _ByteTokenizer:
    """Text -> one token per byte (ids 0..255 of the test vocabulary)."""

    def encode(self, text, add_special_tokens=False):
        return list(text.encode("utf-8"))


@pytest.mark.parametrize("layout", ["psm", "spm"])
@pytest.mark.parametrize("prefix,suffix", [('{"a": [1', '], "b": 2}'), ('{"k": ', '}')])
def test_fill_in_the_middle_end_to_end_json(json_compiled, prefix, suffix, layout):
    from constrained.infill import InfillGrammar, fill_in_the_middle
    from constrained.logprobs.completion import Completer
    cg, _ = json_compiled
    done = 0
    for seed in range(6):
        completer = Completer(_RandomLM(VOCAB.size, seed), _ByteTokenizer(), vocab=VOCAB)
        r = fill_in_the_middle(completer, prefix, suffix, grammar=cg, max_tokens=25,
                               temperature=1.0, seed=seed, logit_bias={EOS: 4.0, PAD: 4.0},
                               layout=layout)
        if r.finish_reason == "stop":
            done += 1
            json.loads(prefix + r.text + suffix)
            assert r.token_ids[-1] in FIM.end_ids
        else:
            assert InfillGrammar(cg, prefix, suffix).matcher().accept_string(r.text)
    assert done >= 3


def test_fill_in_the_middle_with_the_infill_sampler(json_compiled):
    from constrained.infill import fill_in_the_middle
    from constrained.logprobs.completion import Completer
    cg, _ = json_compiled
    prefix, suffix = '{"a": [1', '], "b": 2}'
    ended = 0
    for seed in range(4):
        completer = Completer(_RandomLM(VOCAB.size, seed), _ByteTokenizer(), vocab=VOCAB)
        r = fill_in_the_middle(completer, prefix, suffix, grammar=cg, max_tokens=20,
                               temperature=1.0, seed=seed, infill_sampler=True, top_k=20,
                               logit_bias={EOS: 2.0})
        if r.finish_reason == "stop":
            ended += 1
            json.loads(prefix + r.text + suffix)
    assert ended >= 2


def test_state_keys_follow_the_inner_state():
    cg = compile_grammar(Grammar.from_regex(r"(ab|x)*c"), VOCAB)
    a = InfillMatcher(cg, "ab", "xc", end_ids=[EOS])
    b = InfillMatcher(cg, "ab", "xc", end_ids=[EOS])
    assert a.state_key() is not None and a.state_key() == b.state_key()
    assert a.accept_bytes(b"a") and a.state_key() != b.state_key()
    assert b.accept_bytes(b"a") and a.state_key() == b.state_key()
    assert a.accept_bytes(b"b") and a.accept_token(EOS) and a.state_key() != b.state_key()


SAMPLES = Path(__file__).resolve().parents[1] / "grammars_samples"


def _judge(file):
    if file.endswith(".gbnf"):
        def ok(text):
            try:
                json.loads(text)
                return True
            except ValueError:
                return False
        return ok
    lark = pytest.importorskip("lark")
    return _lark_ok(lark.Lark((GRAMMARS / file).read_text(), parser="earley", lexer="dynamic"))


@pytest.mark.parametrize("file,samples", [("json.lark", "json"), ("json.gbnf", "json"),
                                          ("c_subset.lark", "c_subset")])
def test_middles_cut_from_documents_stay_allowed_and_walks_never_dead_end(file, samples):
    """Prefix and suffix cut from a real document: the document's own middle is allowed byte
    by byte and may end where it ends; random walks never reach a state with no token and no
    end; every middle that ended makes the whole text valid (json.loads or Lark)."""
    cg = compile_grammar(Grammar.from_file(GRAMMARS / file), VOCAB)
    judge = _judge(file)
    docs = [p.read_bytes() for p in sorted((SAMPLES / samples / "valid").iterdir())][:4]
    rng = random.Random(file)
    ended = 0
    for doc in docs:
        for _ in range(3):
            i = rng.randrange(len(doc) + 1)
            j = min(len(doc), i + rng.randrange(0, 12))
            prefix, middle, suffix = doc[:i], doc[i:j], doc[j:]
            m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
            for b in middle:
                assert is_allowed(_mask(m), b), (prefix, middle, suffix)
                assert m.accept_token(b)
            assert is_allowed(_mask(m), EOS) and m.accept_token(EOS)
            for _ in range(4):
                m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
                got, done = _walk(m, rng, 16, lambda text: judge(text), prefix, suffix,
                                  stop_p=0.3)
                if done:
                    ended += 1
                    assert judge(prefix + got + suffix)
                else:       # the walk ran out of steps; it never ran out of tokens
                    assert _mask(m).any()
    assert ended > 0


def test_keys_the_suffix_writes_are_not_written_by_the_middle():
    """Any key order with optional members: a middle that wrote "c" before a suffix that
    writes "c" again could never end (the object would repeat a key). Random walks never dead
    end, and every text they end has distinct keys and validates."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = {"type": "object", "additionalProperties": False,
              "properties": {k: {"type": "string", "maxLength": 2} for k in "abc"}}
    cg = compile_grammar(Grammar.from_json_schema(schema, property_order="any"), VOCAB)
    prefix, suffix = b'{"a": "x", ', b', "c": "z"}'

    def strict(text):
        def pairs(items):
            keys = [k for k, _ in items]
            assert len(keys) == len(set(keys)), keys
            return dict(items)
        try:
            doc = json.loads(text, object_pairs_hook=pairs)
        except (ValueError, AssertionError):
            return False
        return jsonschema.Draft202012Validator(schema).is_valid(doc)

    m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
    assert not m.accept_bytes(b'"c')        # every key starting so is taken
    assert m.accept_bytes(b'"') and not is_allowed(_mask(m), ord("c"))
    m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
    assert m.accept_bytes(b'"b": "y"') and is_allowed(_mask(m), EOS)
    rng = random.Random(5)
    ended = 0
    for _ in range(60):
        m = InfillMatcher(cg, prefix, suffix, end_ids=FIM.end_ids)
        middle, done = _walk(m, rng, 20, strict, prefix, suffix, stop_p=0.2)
        if done:
            ended += 1
        else:
            assert _mask(m).any()
    assert ended > 0
