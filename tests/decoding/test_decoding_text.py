"""Text tracking: whole characters, stop strings, and stop strings gated by a grammar.

Oracle for the gate: the first position where a stop string starts and the text before it is a
full match of the regex (``re.fullmatch``), for texts fed in random pieces.
"""
import random
import re

import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.decoding.text import SentenceGate, TextTracker

VOCAB = Vocabulary.from_token_bytes([bytes([i]) for i in range(256)] + [b"</s>"],
                                    eos_token_ids=[256], name="bytes")


class _Counting:
    """A matcher that counts the bytes it is given."""

    def __init__(self, inner):
        self.inner, self.read = inner, 0

    def accept_bytes(self, data):
        self.read += len(data)
        return self.inner.accept_bytes(data)

    def is_accepting(self):
        return self.inner.is_accepting()


def _feed(tracker, text, rng):
    data, i = text.encode("utf-8"), 0
    while i < len(data) and not tracker.stopped:
        k = rng.randint(1, 4)
        tracker.feed(data[i:i + k])
        i += k
    tracker.finish()
    return tracker.text


def test_tracker_cuts_at_the_first_stop_string_and_holds_back_a_possible_start():
    t = TextTracker(["cab", "q"])
    assert not t.feed(b"abc") and t.pending() == "ab"   # "c" may start "cab"
    assert not t.feed(b"ax") and t.pending() == "cax"
    assert t.feed(b"acabq") and t.text == "abcaxa" and t.pending() == "a"


def test_tracker_releases_whole_characters_only():
    t = TextTracker()
    t.feed("é".encode()[:1])
    assert t.pending() == ""
    t.feed("é".encode()[1:])
    assert t.pending() == "é"


@pytest.mark.parametrize("pattern,stops", [
    (r"\[\d+(,\d+)*\]", [",", "]"]),
    (r"(ab|x)*c", ["c", "abc", "xa"]),
    (r'\{"a": "[a-z,]*"\}(, \{"a": "[a-z,]*"\})*', [", ", "}", "a,"]),
])
def test_gate_stops_only_after_a_complete_sentence(pattern, stops):
    cg = compile_grammar(Grammar.from_regex(pattern), VOCAB)
    gen = re.compile(pattern)
    rng = random.Random(7)
    alphabet = sorted(set("".join(stops) + "abcx[],0123456789{}\": "))
    texts = ["[1,22,3],", "[1,2]]", "ababxc", "abcabc", "xacxa",
             '{"a": "x,y"}, {"a": "a,"}, {"a": ""}']
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(300)]
    for text in texts:
        want = text
        for i in range(len(text)):
            if any(text.startswith(s, i) for s in stops) and gen.fullmatch(text[:i]):
                want = text[:i]
                break
        counting = _Counting(cg.matcher())
        tracker = TextTracker(stops, SentenceGate(lambda: counting))
        got = _feed(tracker, text, rng)
        assert got == want and tracker.stopped == (want != text), (pattern, text)
        assert counting.read <= len(text.encode())


def test_gate_reads_a_text_of_many_stop_strings_once():
    cg = compile_grammar(Grammar.from_regex(r"(a,)*b"), VOCAB)
    counting = _Counting(cg.matcher())
    tracker = TextTracker([","], SentenceGate(lambda: counting))
    for _ in range(5000):
        tracker.feed(b"a,")
    assert not tracker.stopped and counting.read < 10_000
    tracker.feed(b"b,")
    assert tracker.stopped and tracker.text == "a," * 5000 + "b"


def test_gate_never_stops_after_text_the_grammar_refuses():
    cg = compile_grammar(Grammar.from_regex(r"ab"), VOCAB)
    tracker = TextTracker(["!"], SentenceGate(cg.matcher))
    tracker.feed(b"\xff!ab!")   # the replaced byte is not grammar text
    assert not tracker.stopped
