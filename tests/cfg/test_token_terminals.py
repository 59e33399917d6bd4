"""Special tokens in grammars: masks equal a brute-force oracle over a spelled vocabulary.

The oracle reads an equivalent grammar in which every special token is a private-use character
of its own (``<think>`` -> U+F0000 + id) and a negation is a class of every character but the
excluded ones; its vocabulary spells each special token as that character. A special token is
then ordinary text to the oracle, so the engine's token-level terminals are checked against
plain character-level semantics. Text tokens holding byte 0xF3 (the lead byte of those private
characters, which lets the oracle spell them with text) are left out of the comparison.
"""
import random

import numpy as np
import pytest

from cfg_oracle import Oracle
from cfg_vocab import small_vocab
from constrained import Grammar, compile_grammar
from constrained.bitmask import allowed_token_ids
from constrained.errors import GrammarError
from constrained.vocabulary import Vocabulary

SPECIALS = [b"<think>", b"</think>", b"<tool_call>", b"</tool_call>", b"<|im_end|>"]


def _vocab(text: str, docs: list[str]) -> Vocabulary:
    base = small_vocab(text, docs, extra=(b"<think>", b"</think", b"think>", b"\xff", b"\xff\x80"))
    toks = list(base.token_bytes[:base.n_tokens])
    first = len(toks)
    toks += SPECIALS
    eos = [min(base.eos_token_ids), first + 4]
    special = set(base.special_token_ids) | set(range(first, first + len(SPECIALS)))
    return Vocabulary.from_token_bytes(toks, eos, special, vocab_size=len(toks) + 3)


def _char(vocab: Vocabulary, tid: int) -> str:
    return chr(0xF0000 + tid)


def _spelled_vocab(vocab: Vocabulary) -> Vocabulary:
    """Special tokens (but the EOS ones) become text: their private character."""
    toks = [(_char(vocab, i).encode() if i in vocab.special_token_ids - vocab.eos_token_ids
             else t) for i, t in enumerate(vocab.token_bytes)]
    return Vocabulary.from_token_bytes(toks, vocab.eos_token_ids, vocab.eos_token_ids,
                                       vocab_size=vocab.size)


def _allowed(matcher, vocab) -> set:
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(words)
    return set(allowed_token_ids(words, vocab.size).tolist())


def _sid(vocab, text: bytes) -> int:
    return vocab.special_ids_by_text[text]


# (engine grammar in Lark, a function of the vocabulary giving the oracle's Lark grammar, docs)
CASES = {
    "think_then_answer": (
        'start: <think> T* </think> "\\n" ANSWER\nT: /[a-z ]/\nANSWER: "yes" | "no"\n',
        lambda v: (f'start: "{_char(v, _sid(v, b"<think>"))}" T* "{_char(v, _sid(v, b"</think>"))}"'
                   ' "\\n" ANSWER\nT: /[a-z ]/\nANSWER: "yes" | "no"\n'),
        ["yes no think a b", "\nyes"]),
    "negated_reasoning": (
        'start: <think> !</think>* </think> "ok"\n',
        lambda v: (f'start: "{_char(v, _sid(v, b"<think>"))}" NOT* '
                   f'"{_char(v, _sid(v, b"</think>"))}" "ok"\n'
                   f'NOT: /[^{_char(v, _sid(v, b"</think>"))}]/\n'),
        ["a <think> b", "ok {x}"]),
    "calls": (
        'start: call+ | "plain"\ncall: <tool_call> "{" NAME "}" <[%TC_END%]>\nNAME: /[a-z]+/\n',
        lambda v: (f'start: call+ | "plain"\ncall: "{_char(v, _sid(v, b"<tool_call>"))}" "{{" '
                   f'NAME "}}" "{_char(v, _sid(v, b"</tool_call>"))}"\nNAME: /[a-z]+/\n'),
        ["{get}{put}", "plain"]),
}


def _engine_text(text: str, vocab: Vocabulary) -> str:
    return text.replace("%TC_END%", str(_sid(vocab, b"</tool_call>")))


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[1] is not None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masks_equal_oracle_with_special_tokens(name, seed):
    text, oracle_text, docs = CASES[name]
    vocab = _vocab(text, docs)
    spelled = _spelled_vocab(vocab)
    compiled = compile_grammar(Grammar.from_lark(_engine_text(text, vocab)), vocab)
    oracle = Oracle(Grammar.from_lark(oracle_text(vocab)))
    eos = set(vocab.eos_token_ids)
    lead = {i for i, t in enumerate(vocab.token_bytes) if b"\xf3" in t}
    rng = random.Random(seed)
    for _ in range(4):
        matcher, st = compiled.matcher(), oracle.initial
        for _ in range(30):
            expected = oracle.allowed(st, spelled) - lead
            got = _allowed(matcher, vocab) - lead
            assert got == expected, [vocab.token_bytes[i] for i in got ^ expected]
            assert not got & {i for i, t in enumerate(vocab.token_bytes) if b"\xff" in t}
            steps = sorted(expected - eos)
            if not steps or (expected & eos and rng.random() < 0.2):
                assert matcher.accept_token(min(eos))
                break
            # special tokens are rare among the choices: favour them so walks reach them
            specials = [t for t in steps if t in vocab.special_token_ids]
            tid = rng.choice(specials if specials and rng.random() < 0.4 else steps)
            assert matcher.accept_token(tid)
            st = oracle.feed(st, spelled.token_bytes[tid])
            assert st is not None


def test_special_token_text_spelled_in_ordinary_tokens_never_matches():
    text = 'start: <think> "a"\n'
    vocab = _vocab(text, ["a"])
    m = compile_grammar(Grammar.from_lark(text), vocab).matcher()
    ordinary = vocab.token_bytes.index(b"<think>")          # the text token, not the special one
    assert ordinary not in vocab.special_token_ids
    assert _allowed(m, vocab) == {_sid(vocab, b"<think>")}
    assert not m.accept_token(ordinary)
    assert not m.accept_token(vocab.token_bytes.index(b"<"))
    assert m.accept_token(_sid(vocab, b"<think>")) and m.accept_token(vocab.token_bytes.index(b"a"))
    assert m.is_accepting()


def test_text_grammars_never_allow_special_tokens():
    text = 'start: /[\\s\\S]+/\n'
    vocab = _vocab(text, ["anything"])
    m = compile_grammar(Grammar.from_lark(text), vocab).matcher()
    got = _allowed(m, vocab)
    assert not got & vocab.special_token_ids
    assert vocab.token_bytes.index(b"<think>") in got


def test_gbnf_token_references_and_negation():
    vocab = _vocab('"x"', ["x"])
    end = _sid(vocab, b"</think>")
    g = Grammar.from_gbnf(f'root ::= <think> !<[{end}]>* <[{end}]> "x"')
    m = compile_grammar(g, vocab).matcher()
    assert m.accept_token(_sid(vocab, b"<think>"))
    inside = _allowed(m, vocab)
    assert end in inside and _sid(vocab, b"<tool_call>") in inside
    assert not inside & vocab.eos_token_ids           # negations never include end of sequence
    assert _sid(vocab, b"<think>") in inside
    for t in (b"a", b"<think>", b" "):
        assert m.accept_token(vocab.token_bytes.index(t))
    assert m.accept_token(end) and m.accept_token(vocab.token_bytes.index(b"x"))
    assert m.is_accepting()


def test_eos_token_named_by_a_grammar():
    vocab = _vocab('"a"', ["a"])
    im_end = _sid(vocab, b"<|im_end|>")
    m = compile_grammar(Grammar.from_lark('start: "a" <|im_end|> "b"\n'), vocab).matcher()
    a, b = vocab.token_bytes.index(b"a"), vocab.token_bytes.index(b"b")
    assert m.accept_token(a)
    assert _allowed(m, vocab) == {im_end}
    assert m.accept_token(im_end) and not m.is_terminated()
    assert m.accept_token(b) and m.accept_token(im_end) and m.is_terminated()


@pytest.mark.parametrize("text, message, line, column", [
    ('start: "a" <nothere>\n', "not a special token", 1, 12),
    ('start: "a"\n  | <[99999]>\n', "outside the vocabulary", 2, 5),
    ('start: <[97]>\n', "ordinary token", 1, 8),
    ('start: "a" <think_>\n', "not a special token", 1, 12),
])
def test_bad_token_references_name_the_place(text, message, line, column):
    vocab = _vocab('"a"', ["a"])
    with pytest.raises(GrammarError, match=message) as info:
        compile_grammar(Grammar.from_lark(text), vocab)
    assert (info.value.line, info.value.column) == (line, column)


@pytest.mark.parametrize("text", ['start: "a" <\n', 'start: <[1-]>\n', 'start: !<[^3]>\n',
                                  'start: <[5-2]>\n'])
def test_malformed_token_references_are_grammar_errors(text):
    with pytest.raises(GrammarError):
        Grammar.from_lark(text)


def test_references_inside_strings_regexes_and_comments_are_text():
    g = Grammar.from_lark('start: "<think>" /<[a-z]>/ // <think>\n')
    assert not g.has_token_refs


@pytest.fixture(scope="module")
def qwen3():
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding("qwen3")
    return Vocabulary.from_tiktoken(enc), enc


def _ids(enc, vocab, text: str) -> list[int]:
    """Token ids of ``text`` with special token texts as their tokens (as Qwen3 encodes)."""
    out, pattern = [], "(" + "|".join(
        __import__("re").escape(t.decode()) for t in vocab.special_ids_by_text) + ")"
    for part in __import__("re").split(pattern, text):
        if part.encode() in vocab.special_ids_by_text:
            out.append(vocab.special_ids_by_text[part.encode()])
        elif part:
            out.extend(enc.encode_ordinary(part))
    return out


def test_shipped_qwen3_grammar_on_the_qwen3_vocabulary(qwen3):
    from pathlib import Path
    vocab, enc = qwen3
    path = Path(__file__).resolve().parents[2] / "grammars" / "qwen3_think_tool_call.lark"
    compiled = compile_grammar(Grammar.from_file(path), vocab)
    good = ('<think>The user wants Oslo weather; <tool_call> is how I call.</think>\n\n'
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", '
            '"unit": "celsius"}}\n</tool_call>')
    m = compiled.matcher()
    for t in _ids(enc, vocab, good):
        allowed = set(m.allowed_token_ids().tolist())
        assert t in allowed
        assert m.accept_token(t)
    assert m.is_accepting()
    # the think block's text may spell "<tool_call>" in ordinary tokens, never the token
    m = compiled.matcher()
    assert m.accept_token(vocab.special_ids_by_text[b"<think>"])
    inside = set(m.allowed_token_ids().tolist())
    assert vocab.special_ids_by_text[b"<tool_call>"] in inside     # a token but </think>
    assert vocab.special_ids_by_text[b"</think>"] in inside
    assert not inside & vocab.eos_token_ids
    # after </think> only the newlines, then only the <tool_call> token
    for t in _ids(enc, vocab, "x</think>\n\n"):
        assert m.accept_token(t)
    assert m.allowed_token_ids().tolist() == [vocab.special_ids_by_text[b"<tool_call>"]]


def test_llama3_header_tokens(llama3_vocab):
    vocab = llama3_vocab
    g = Grammar.from_gbnf('root ::= <|start_header_id|> ("user" | "assistant") '
                          '<|end_header_id|> "\\n\\n" [a-z ]+ <|eot_id|>')
    m = compile_grammar(g, vocab).matcher()
    start, end = (vocab.special_ids_by_text[b"<|start_header_id|>"],
                  vocab.special_ids_by_text[b"<|end_header_id|>"])
    assert m.allowed_token_ids().tolist() == [start]
    assert m.accept_token(start) and m.accept_bytes(b"assistant")
    assert m.allowed_token_ids().tolist() == [end]
    assert m.accept_token(end) and m.accept_bytes(b"\n\nhello there")
    eot = vocab.special_ids_by_text[b"<|eot_id|>"]
    assert eot in m.allowed_token_ids().tolist()
    assert m.accept_token(eot) and m.is_terminated() is False and m.is_accepting()
