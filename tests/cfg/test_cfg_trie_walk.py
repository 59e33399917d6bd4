"""The C trie walks (every token from a lexer state; the subtrees below crossing nodes from the
empty lexeme) equal stepping each token byte by byte."""
import random

import numpy as np
import pytest

from constrained import Grammar
from constrained.bitmask import allowed_token_ids
from constrained.cfg import _walks, token_tables
from constrained.cfg.lexer import Lexer
from constrained.cfg.prepare import prepare_grammar
from constrained.cfg.runtime import Runtime
from constrained.cfg.token_tables import preorder_trie, walk_subtrees, walk_trie

pytestmark = pytest.mark.slow


def _brute(lex: Lexer, vocab, q: int, items):
    """(ok tokens, {terminal set: {(token, offset)}}): each (token, offset) remainder read
    from lexer state ``q`` byte by byte."""
    ok, groups = set(), {}
    for t, start in items:
        data, s = vocab.token_bytes[t], q
        for off in range(start, len(data)):
            nxt = lex.rows[s][data[off]]
            if nxt < 0:
                if lex.acc_list[s]:
                    groups.setdefault(lex.accepting_terms[s], set()).add((t, off))
                break
            s = nxt
        else:
            ok.add(t)
    return ok, groups


def _pairs(trie, nodes) -> set:
    """(token, byte offset) of every token below ``nodes``."""
    return {(int(t), int(trie.depth[n]) - 1) for n in nodes.tolist()
            for t in trie.token_ids[trie.lo[n]:trie.hi[n]]}


def _slice_rests(trie, k: int) -> set:
    """(token, byte offset of its character k + 1) of every slice token of more than k
    characters: what a walk's marker ``-1 - k`` stands for."""
    rows = trie.text_slice
    longer = allowed_token_ids((rows[token_tables.SLICE_CHARS] & ~rows[k]).view(np.int32),
                               trie.words * 32)
    out = set()
    for t in longer.tolist():
        data = _VOCAB_BYTES[trie.vocab_hash][t]
        starts = [i for i, b in enumerate(data) if b & 0xC0 != 0x80]
        out.add((t, starts[k]))
    return out


_VOCAB_BYTES: dict = {}


def _as_sets(trie, ok, groups, vocab=None):
    """(ok token set, {terminal set: {(token, offset)}}) of a walk's result; a marker group
    stands for the remainders it names (and may repeat an explicit group's terminals)."""
    if vocab is not None:
        _VOCAB_BYTES[trie.vocab_hash] = vocab.token_bytes
    got, explicit = {}, set()
    for terms, nodes in groups:
        k = token_tables.slice_marker(nodes)
        if k is not None:
            got.setdefault(terms, set()).update(_slice_rests(trie, k))
            continue
        assert terms not in explicit            # one group of nodes per terminal set
        explicit.add(terms)
        got.setdefault(terms, set()).update(_pairs(trie, nodes))
    assert len(set(ok.tolist())) == len(ok)
    return set(ok.tolist()), got


def test_trie_walks_equal_byte_by_byte_on_llama3(llama3_vocab):
    props = {f"field_{i}": {"type": "integer"} for i in range(70)}
    props["note"] = {"type": "string"}
    g = Grammar.from_json_schema({"type": "object", "properties": props})
    pg = prepare_grammar(g)
    trie = preorder_trie(llama3_vocab)
    text = np.nonzero(llama3_vocab.text_token_mask[:llama3_vocab.n_tokens])[0].tolist()
    rng = random.Random(7)
    big = frozenset(range(len(pg.dfas)))      # every terminal: keys, strings, numbers, ...
    tested_text, simulated = 0, False
    for terms in (big, frozenset(rng.sample(sorted(big), 20))):
        lex = Lexer(terms, pg.dfas)
        # string contents (states looping on letters) are taken by the shortcuts: test them
        text_states = [q for q in range(lex.n_states) if lex.rows[q][ord("a")] == q][:3]
        tested_text += len(text_states)
        for q in [0] + text_states + rng.sample(range(1, lex.n_states),
                                                 min(2, lex.n_states - 1)):
            words, groups = walk_trie(lex, trie, q)
            ok = allowed_token_ids(words, llama3_vocab.size)
            got = _as_sets(trie, ok, groups, llama3_vocab)
            assert got == _brute(lex, llama3_vocab, q, [(t, 0) for t in text])
        # subtrees below random disjoint nodes at depths 1 to 4
        nodes = sorted(rng.sample(range(trie.n_nodes), 400))
        roots, end = [], -1
        for n in nodes:
            if n >= end and 1 <= trie.depth[n] <= 4:
                roots.append(n)
                end = int(trie.skip[n])
        roots = np.array(roots, dtype=np.int32)
        got = _as_sets(trie, *walk_subtrees(lex, trie, roots))
        assert got == _brute(lex, llama3_vocab, 0, sorted(_pairs(trie, roots)))
        simulated |= bool((lex.simulates_text == 1).any())
    assert tested_text and simulated      # the text shortcut was taken


def test_preorder_trie_spans_cover_each_token_once(llama3_vocab):
    trie = preorder_trie(llama3_vocab)
    tops = np.flatnonzero(trie.depth == 1)
    assert trie.skip[tops[-1]] == trie.n_nodes
    assert np.array_equal(trie.skip[tops[:-1]], tops[1:])      # top-level subtrees tile
    assert trie.own.sum() == len(trie.token_ids)
    for n in random.Random(3).sample(range(trie.n_nodes), 200):
        prefix = llama3_vocab.token_bytes[int(trie.token_ids[trie.lo[n]])][:trie.depth[n]]
        for t in trie.token_ids[trie.lo[n]:trie.hi[n]].tolist():
            assert llama3_vocab.token_bytes[t].startswith(prefix)
        for t in trie.token_ids[trie.lo[n]:trie.lo[n] + trie.own[n]].tolist():
            assert llama3_vocab.token_bytes[t] == prefix



def test_walks_in_counted_strings_equal_byte_by_byte(llama3_vocab):
    """A string of at most 12 characters: each position reads a different number of characters
    as text, so the walks take text slices of different rows (and none near the end)."""
    g = Grammar.from_json_schema({"type": "object", "properties": {
        "s": {"type": "string", "minLength": 2, "maxLength": 12}}, "required": ["s"]})
    pg = prepare_grammar(g)
    trie = preorder_trie(llama3_vocab)
    text = np.nonzero(llama3_vocab.text_token_mask[:llama3_vocab.n_tokens])[0].tolist()
    string = next(i for i, d in enumerate(pg.dfas) if d.accepts(b'"abcdefghijkl"')
                  and not d.accepts(b'"abcdefghijklm"'))
    lex = Lexer(frozenset({string}), pg.dfas)
    token_tables._ROOT_WALKS.clear()       # walk this lexer, not a cached one
    q, reads = 0, []
    for b in b'"abcdefghijkl':
        q = lex.rows[q][b]
        words, groups = walk_trie(lex, trie, q)
        got = _as_sets(trie, allowed_token_ids(words, llama3_vocab.size), groups, llama3_vocab)
        assert got == _brute(lex, llama3_vocab, q, [(t, 0) for t in text])
        reads.append(int(lex.text_chars[q]))
    counts = [r & 0xFF for r in reads]
    assert counts[0] == 12 and counts[-1] == 0 and sorted(counts, reverse=True) == counts
    assert all(r >> 8 for r in reads[:-1])     # tight: no string reads more than 12 characters


def test_subtree_walks_into_a_counted_chunk_equal_byte_by_byte(llama3_vocab):
    """A long string's chunks: the remainders of tokens that end a chunk are read from the
    next chunk's empty lexeme, which reads any text of up to SLICE_CHARS characters, so
    subtrees of short text are taken whole (once it knows how much text it reads)."""
    g = Grammar.from_json_schema({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 300}}, "required": ["s"]})
    pg = prepare_grammar(g)
    trie = preorder_trie(llama3_vocab)
    # the chunks after the first: text that neither opens the string nor reads short
    chunks = [i for i, d in enumerate(pg.dfas)
              if not d.pattern.startswith('"') and d.n_states > 100]
    assert len(chunks) >= 2
    rng = random.Random(11)
    texts = [n for n in range(trie.n_nodes) if trie.clean[n] & 1 and trie.rest[n] <= 32]
    read = []
    for chunk in chunks:
        lex = Lexer(frozenset({chunk}), pg.dfas)
        token_tables._SUBTREE_WALKS.clear()
        nodes = sorted(rng.sample(range(trie.n_nodes), 300) + rng.sample(texts, 300))
        roots, end = [], -1
        for n in nodes:
            if n >= end:
                roots.append(n)
                end = int(trie.skip[n])
        roots = np.array(roots, dtype=np.int32)
        got = _as_sets(trie, *walk_subtrees(lex, trie, roots))
        assert got == _brute(lex, llama3_vocab, 0, sorted(_pairs(trie, roots)))
        read.append(int(lex.text_chars[0]) & 0xFF)
    assert max(read) > 0        # the shortcut's test ran, and some chunk reads text


def test_walks_along_long_string_chunks_equal_byte_by_byte(llama3_vocab):
    """A long string is lexed in chunks: where a chunk has k characters left, every longer
    text token crosses at its character k + 1, and the walk leaves one marker for them
    instead of every crossing node; the marker's remainders, read from the next chunk (again
    a marker where that one ends), equal stepping each token."""
    g = Grammar.from_json_schema({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 100}}, "required": ["s"]})
    pg = prepare_grammar(g)
    runtime = Runtime(pg)
    trie = preorder_trie(llama3_vocab)
    text = np.nonzero(llama3_vocab.text_token_mask[:llama3_vocab.n_tokens])[0].tolist()
    token_tables._ROOT_WALKS.clear()
    token_tables._SLICE_WALKS.clear()
    state = runtime.step(runtime.initial, b'{"s": "')
    marked = 0
    for i in range(70):
        col, q = state
        lex = runtime.lexer(col.candidates)
        words, groups = walk_trie(lex, trie, q)
        got = _as_sets(trie, allowed_token_ids(words, llama3_vocab.size), groups, llama3_vocab)
        if i % 7 == 0 or i in (30, 31, 62, 63):
            assert got == _brute(lex, llama3_vocab, q, [(t, 0) for t in text]), i
        for terms, nodes in groups:
            k = token_tables.slice_marker(nodes)
            if k is None:
                continue
            marked += 1
            nxt = runtime.parser.advance(col, terms, runtime.parser.terminal_set_id(terms))
            assert nxt is not None
            after = runtime.lexer(nxt.candidates)
            rest_words, rest_groups = token_tables.walk_slice_rests(after, trie, k)
            rests = _as_sets(trie, allowed_token_ids(rest_words, llama3_vocab.size),
                             rest_groups, llama3_vocab)
            assert rests == _brute(after, llama3_vocab, 0, sorted(_slice_rests(trie, k))), i
        state = runtime.step(state, b"x")
    assert marked >= 20


@pytest.mark.parametrize("lark, k, walked", [
    # the empty lexeme reads letters on and dies on other text: no row, no marker (walked)
    ('start: A | B\nA: /[a-z]{3}/\nB: /[a-z]+!/', 3, True),
    # reads exactly 4 characters of any text and crosses: a marker again
    ('start: A+\nA: /[^"\\\\\\x00-\\x1f]{4}/', 2, False),
    # reads 4 characters, then completes A or needs B's quote (two ends): walked
    ('start: A | B\nA: /[a-m][^"\\\\\\x00-\\x1f]{3}/\n'
     'B: /[^a-m"\\\\\\x00-\\x1f][^"\\\\\\x00-\\x1f]{3}"/', 1, True),
    # reads 4 letters, other text ends it early: walked
    ('start: A+\nA: /[a-zé ]{4}/', 2, True),
    # reads up to 6 characters, then only a quote: tight
    ('start: A\nA: /[^"\\\\\\x00-\\x1f]{0,6}"/', 10, False),
])
def test_slice_rests_equal_byte_by_byte(llama3_vocab, lark, k, walked):
    pg = prepare_grammar(Grammar.from_lark(lark))
    lex = Lexer(frozenset(range(pg.n_terminals)), pg.dfas)
    trie = preorder_trie(llama3_vocab)
    token_tables._SLICE_WALKS.clear()
    words, groups = token_tables.walk_slice_rests(lex, trie, k)
    got = _as_sets(trie, allowed_token_ids(words, llama3_vocab.size), groups, llama3_vocab)
    # a walked answer also holds the other tokens below the crossing nodes
    nodes = np.frombuffer(_walks.slice_crossings(trie.node_byte, trie.depth, trie.skip,
                                                 trie.slice_chars, k), dtype=np.int32)
    below = _pairs(trie, nodes)
    rests = _slice_rests(trie, k)
    assert below >= rests and len(nodes) == len(set(nodes.tolist()))
    items = rests | below if walked else rests
    assert got == _brute(lex, llama3_vocab, 0, sorted(items))
    assert got[0] or any(got[1].values())
    markers = [token_tables.slice_marker(n) for _, n in groups]
    assert all(m is None for m in markers) if walked else all(m is not None for m in markers)


def test_rest_bytes_are_the_longest_remainder_below_each_node(llama3_vocab):
    trie = preorder_trie(llama3_vocab)
    for n in random.Random(5).sample(range(trie.n_nodes), 300):
        longest = max(len(llama3_vocab.token_bytes[int(t)])
                      for t in trie.token_ids[trie.lo[n]:trie.hi[n]])
        assert trie.rest[n] == min(longest - int(trie.depth[n]) + 1, 255)


def test_text_slice_rows_hold_text_tokens_by_characters(llama3_vocab):
    trie = preorder_trie(llama3_vocab)
    rows = trie.text_slice
    for k in (1, 3, 8, rows.shape[0] - 1):
        ids = allowed_token_ids(rows[k].view(np.int32), llama3_vocab.size).tolist()
        assert ids
        for t in ids:
            text = llama3_vocab.token_bytes[t]
            assert not any(b in b'"\\' or b < 0x20 for b in text)
            assert sum(1 for b in text if b & 0xC0 != 0x80) <= k
    assert set(allowed_token_ids(rows[3].view(np.int32), llama3_vocab.size).tolist()) <= \
        set(allowed_token_ids(rows[8].view(np.int32), llama3_vocab.size).tolist())


def test_text_slices_round_trip_through_the_disk_cache(tmp_path, monkeypatch, llama3_vocab):
    from constrained.automata.disk_cache import save_arrays
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    trie = preorder_trie(llama3_vocab)
    arrays = {f: getattr(trie, f) for f in ("node_byte", "depth", "skip", "lo", "hi", "own",
                                            "token_ids")}
    chars, rows = token_tables._text_slices(arrays, trie.clean, trie.words)
    assert np.array_equal(chars, trie.slice_chars) and np.array_equal(rows, trie.text_slice)
    save_arrays("slices-test", {"slice_chars": chars, "text_slice": rows})
    loaded = token_tables._load_slices("slices-test", trie.n_nodes, trie.words)
    assert np.array_equal(loaded[0], chars) and np.array_equal(loaded[1], rows)
    bad = chars.copy()
    bad[0] = token_tables.SLICE_CHARS + 1
    save_arrays("slices-bad", {"slice_chars": bad, "text_slice": rows})
    assert token_tables._load_slices("slices-bad", trie.n_nodes, trie.words) is None
    assert token_tables._load_slices("slices-test", trie.n_nodes + 1, trie.words) is None


def test_preorder_trie_round_trips_through_the_disk_cache(tmp_path, monkeypatch, llama3_vocab):
    """The arrays saved with the trie (the walks' per-node token ends and text bits among them)
    load as computed, and a file with an end outside the vocabulary is refused."""
    from constrained.automata.disk_cache import save_arrays
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    trie = preorder_trie(llama3_vocab)
    arrays = token_tables._preorder_arrays(llama3_vocab, False)
    assert np.array_equal(arrays["ends"], trie.ends) and np.array_equal(arrays["clean"], trie.clean)
    assert np.array_equal(arrays["ends"], token_tables._ends(arrays))
    sub = np.zeros((trie.n_nodes, 4), dtype=np.uint64)
    rest = np.zeros(trie.n_nodes, dtype=np.uint8)
    token_tables._walks.subtree_bytes(trie.node_byte, trie.skip, sub, rest)
    assert np.array_equal(trie.sub_sets[trie.sub_id], sub) and np.array_equal(trie.rest, rest)
    assert len(np.unique(trie.sub_sets, axis=0)) == len(trie.sub_sets)     # each set once
    save_arrays("preorder-test", arrays)
    loaded = token_tables._load_preorder(llama3_vocab, "preorder-test")
    assert all(np.array_equal(loaded[f], arrays[f]) for f in arrays)
    bad = dict(arrays, ends=arrays["ends"].copy())
    bad["ends"][5] = llama3_vocab.n_tokens
    save_arrays("preorder-bad", bad)
    assert token_tables._load_preorder(llama3_vocab, "preorder-bad") is None
    save_arrays("preorder-short", {f: a for f, a in arrays.items() if f != "clean"})
    assert token_tables._load_preorder(llama3_vocab, "preorder-short") is None


@pytest.mark.parametrize("schema, text", [
    ({"type": "string", "minLength": 3, "maxLength": 7}, '"aé€\\"b'),
    ({"type": "string", "pattern": "^[a-z]{2,9}$"}, '"abcdefg'),
    ({"type": "string", "maxLength": 40}, '"' + "x" * 30 + "é" * 8),
    ({"type": "object", "properties": {"name": {"type": "string", "maxLength": 4},
                                       "note": {"type": "string"}}},
     '{"name": "ab'),
    ({"enum": ["alpha", "alphabet", "beta"]}, '"alph'),
])
def test_walks_along_strings_equal_byte_by_byte_on_qwen3(schema, text):
    """Walks from every state along a document prefix (counted, patterned and plain strings,
    escapes, multi-byte characters) on another vocabulary equal stepping each token."""
    quicktok = pytest.importorskip("quicktok")
    from constrained import Vocabulary
    from constrained.cfg.runtime import Runtime
    vocab = Vocabulary.from_tiktoken(quicktok.get_encoding("qwen3"))
    pg = prepare_grammar(Grammar.from_json_schema(schema))
    runtime = Runtime(pg)
    trie = preorder_trie(vocab)
    tokens = np.nonzero(vocab.text_token_mask[:vocab.n_tokens])[0].tolist()
    text_ids = set(tokens)
    token_tables._ROOT_WALKS.clear()
    state = runtime.initial
    for b in text.encode():
        state = runtime.step(state, bytes((b,)))
        assert state is not None
        col, q = state
        lex = runtime.lexer(col.candidates)
        if q == 0:
            continue
        words, groups = walk_trie(lex, trie, q)
        ok, crossing = _as_sets(trie, allowed_token_ids(words, vocab.size), groups, vocab)
        # the trie also spells special tokens (a byte no text has): compare text tokens
        crossing = {terms: {p for p in pairs if p[0] in text_ids}
                    for terms, pairs in crossing.items()}
        got = ok & text_ids, {terms: pairs for terms, pairs in crossing.items() if pairs}
        assert got == _brute(lex, vocab, q, [(t, 0) for t in tokens]), (text, b)


def test_exact_tokens_equal_a_lookup_by_bytes(llama3_vocab):
    """``_walks.exact_tokens``: for each prefix of a text, the text tokens spelled exactly
    so; the list may end only where no text token starts with the prefix. A corrupt trie
    raises ValueError."""
    from constrained.cfg import _walks
    trie = preorder_trie(llama3_vocab)
    arrays = (trie.node_byte, trie.skip, trie.lo, trie.own, trie.token_ids)
    by_bytes: dict = {}
    for t in np.flatnonzero(llama3_vocab.text_token_mask).tolist():
        by_bytes.setdefault(llama3_vocab.token_bytes[t], []).append(t)
    starts = {tb[:i] for tb in by_bytes for i in range(1, len(tb) + 1)}
    rng = random.Random(3)
    tokens = llama3_vocab.token_bytes
    texts = [b"customer_name", b"\xff\x00", "é€".encode()] + [
        tokens[rng.randrange(len(tokens))] + tokens[rng.randrange(len(tokens))]
        for _ in range(500)]
    for text in texts:
        got = _walks.exact_tokens(*arrays, text)
        assert len(text) == len(got) or text[:len(got) + 1] not in starts, text
        for i, spelled in enumerate(got):
            assert sorted(np.frombuffer(spelled, dtype=np.int32).tolist()) == \
                sorted(by_bytes.get(text[:i + 1], [])), (text, i)
    bad_skip = trie.skip.copy()
    bad_skip[0] = 0
    with pytest.raises(ValueError):
        _walks.exact_tokens(trie.node_byte, bad_skip, trie.lo, trie.own, trie.token_ids, b"a")
    with pytest.raises(ValueError):
        _walks.exact_tokens(trie.node_byte, trie.skip[:-1], trie.lo, trie.own, trie.token_ids,
                            b"a")


def test_slice_rests_with_no_longer_tokens_allow_nothing():
    """A vocabulary whose text tokens all have at most 7 characters: past 10 characters there
    is nothing to read (the walk below no crossing node is not a walk of the whole trie)."""
    from cfg_vocab import small_vocab
    vocab = small_vocab("", ["hello world, words of text"], seed=3)
    pg = prepare_grammar(Grammar.from_lark('start: A | B\nA: /[a-z]{3}/\nB: /[a-z]+!/'))
    lex = Lexer(frozenset(range(pg.n_terminals)), pg.dfas)
    trie = preorder_trie(vocab, disk_cache=False)
    token_tables._SLICE_WALKS.clear()
    words, groups = token_tables.walk_slice_rests(lex, trie, 10)
    assert not words.any() and groups == []
    words, groups = token_tables.walk_slice_rests(lex, trie, 1)     # walked: some are read
    got = _as_sets(trie, allowed_token_ids(words, vocab.size), groups, vocab)
    assert got == _brute(lex, vocab, 0, sorted(_slice_rests(trie, 1) | _pairs(
        trie, np.frombuffer(_walks.slice_crossings(trie.node_byte, trie.depth, trie.skip,
                                                   trie.slice_chars, 1), dtype=np.int32))))
    assert got[0]


def test_component_walks_equal_the_product_walk(llama3_vocab):
    """Below random trie nodes, a lexer read through its components (product not built)
    finds what the walk on its product finds: the same ok tokens and the same crossing nodes
    for the same terminal sets, on lexers of keys (texts), key-except automata, strings,
    numbers and whitespace; and the lexer stays unbuilt."""
    props = {f"k{i}": {"type": ["integer", "string", "boolean"][i % 3]} for i in range(12)}
    props["note"] = {"type": "string", "maxLength": 20}
    g = Grammar.from_json_schema({"type": "object", "properties": props,
                                  "required": ["k0", "k3"]}, property_order="any")
    pg = prepare_grammar(g)
    trie = preorder_trie(llama3_vocab)
    rng = random.Random(13)
    every = sorted(range(len(pg.dfas)))
    compared = crossed = 0
    for trial in range(120):
        terms = frozenset(rng.sample(every, rng.randint(1, min(len(every), 12))))
        nodes = sorted(rng.sample(range(trie.n_nodes), 300))
        roots, end = [], -1
        for n in nodes:
            if n >= end and 1 <= trie.depth[n] <= 3 and trie.skip[n] - n < 200:
                roots.append(n)
                end = int(trie.skip[n])
        roots = np.array(roots, dtype=np.int32)
        lazy = Lexer(terms, pg.dfas, words=pg.words)
        if lazy.built:          # (a lexer of these terminals was built before)
            continue
        got = token_tables._walk_components(lazy, trie, roots)
        if got is None:
            continue
        assert not lazy.built
        built = Lexer(terms, pg.dfas, words=pg.words)
        built.build()
        want = token_tables._walk(built, trie, 0, roots, False)
        order = built.order
        as_terms = [(frozenset(order[p] for p in pos), nodes) for pos, nodes in got[1]]
        assert _as_sets(trie, got[0], as_terms) == _as_sets(trie, *want)
        compared += 1
        crossed += bool(as_terms)
    assert compared > 60 and crossed > 10


def test_component_walks_give_up_past_their_budget(llama3_vocab):
    g = Grammar.from_lark('start: WORD\nWORD: /[a-zA-Z ]+/\n')
    pg = prepare_grammar(g)
    trie = preorder_trie(llama3_vocab)
    lex = Lexer(frozenset(range(len(pg.dfas))), pg.dfas, words=pg.words)
    roots = np.array([n for n in range(trie.n_nodes) if trie.depth[n] == 1], dtype=np.int32)
    assert token_tables._walk_components(lex, trie, roots) is None     # the whole trie
    ok, groups = walk_subtrees(lex, trie, roots)        # then the product is built
    assert lex.built and len(ok)


@pytest.mark.parametrize("schema, prefixes", [
    ({"anyOf": [{"const": "startVersion"}, {"type": "string", "maxLength": 11}]},
     [b'"', b'"s', b'"start', b'"startVersio']),
    ({"anyOf": [{"enum": ["abcdefghijkl", "xyz"]}, {"type": "string", "minLength": 2,
                                                     "maxLength": 5}]},
     [b'"', b'"abc', b'"abcde', b'"xy']),
    ({"anyOf": [{"type": "boolean"}, {"const": "a long constant value"},
                {"type": "string", "maxLength": 3}]}, [b'"', b'"a', b'"a l'])])
def test_walks_where_a_constant_outlasts_a_counted_string(llama3_vocab, schema, prefixes):
    """A union of a counted string and a longer constant: the lexer state reached by the
    counted string's last character is reached again by the constant's longer text, and the
    walk must still allow the tokens that go on along the constant (a text count that looked
    tight forbade them)."""
    g = Grammar.from_json_schema(schema)
    pg = prepare_grammar(g)
    runtime = Runtime(pg)
    trie = preorder_trie(llama3_vocab)
    text = np.nonzero(llama3_vocab.text_token_mask[:llama3_vocab.n_tokens])[0].tolist()
    for prefix in prefixes:
        col, q = runtime.step(runtime.initial, prefix)
        lex = Lexer(col.candidates, pg.dfas, words=pg.words)
        words, groups = walk_trie(lex, trie, q)
        got = _as_sets(trie, allowed_token_ids(words, llama3_vocab.size), groups, llama3_vocab)
        assert got == _brute(lex, llama3_vocab, q, [(t, 0) for t in text]), prefix


def test_component_walks_with_many_crossings_and_sets(llama3_vocab, monkeypatch):
    """Twelve one-letter terminals below every first byte a..l: hundreds of crossing nodes in
    twelve accepting sets (the walk's lists grow past their first sizes)."""
    lark = ("start: (" + "|".join(f"T{i}" for i in range(12)) + ")+\n"
            + "\n".join(f'T{i}: "{chr(97 + i)}"' for i in range(12)) + "\n")
    pg = prepare_grammar(Grammar.from_lark(lark))
    trie = preorder_trie(llama3_vocab)
    terms = frozenset(range(len(pg.dfas)))
    roots = np.array([n for n in range(trie.n_nodes)
                      if trie.depth[n] == 1 and 97 <= trie.node_byte[n] < 109], dtype=np.int32)
    monkeypatch.setattr(token_tables, "_COMPONENT_VISITS", 10**7)
    got = token_tables._walk_components(Lexer(terms, pg.dfas, words=pg.words), trie, roots)
    built = Lexer(terms, pg.dfas, words=pg.words)
    built.build()
    want = token_tables._walk(built, trie, 0, roots, False)
    assert len(got[1]) == 12 and sum(len(nodes) for _, nodes in got[1]) > 64
    as_terms = [(frozenset(built.order[p] for p in pos), nodes) for pos, nodes in got[1]]
    assert _as_sets(trie, got[0], as_terms) == _as_sets(trie, *want)


def test_walks_keep_every_token_of_a_spelling_several_tokens_share():
    from constrained.vocabulary import Vocabulary
    toks = [bytes([b]) for b in range(256)] + [b"ab", b"ab", b"abc", b'a"', b'ab"', b'ab"',
                                               b"b", b"xyz"]
    vocab = Vocabulary.from_token_bytes(toks + [b"<eos>"], eos_token_ids=[len(toks)])
    trie = preorder_trie(vocab, disk_cache=False)
    for n in range(trie.n_nodes):
        own = int(trie.own[n])
        expect = -1 if own == 0 else -2 if own > 1 else int(trie.token_ids[trie.lo[n]])
        assert trie.ends[n] == expect
    assert (trie.ends == -2).sum() == 3         # "b" (a byte and a token), "ab", 'ab"'
    pg = prepare_grammar(Grammar.from_json_schema({"type": "string"}))
    lex = Lexer(frozenset(range(len(pg.dfas))), pg.dfas)
    text = [t for t in range(len(toks)) if vocab.text_token_mask[t]]
    eos = len(toks)     # (spelled in the trie by its special spelling, not its bytes)

    def texts(got):
        return got[0] - {eos}, {k: {p for p in v if p[0] != eos} for k, v in got[1].items()}
    for q in range(lex.n_states):
        words, groups = walk_trie(lex, trie, q)
        got = _as_sets(trie, allowed_token_ids(words, vocab.size), groups, vocab)
        assert texts(got) == _brute(lex, vocab, q, [(t, 0) for t in text])
    roots = np.flatnonzero(trie.depth == 1).astype(np.int32)
    got = _as_sets(trie, *walk_subtrees(lex, trie, roots))
    assert texts(got) == _brute(lex, vocab, 0, sorted(p for p in _pairs(trie, roots)
                                                       if p[0] != eos))
