"""One small adapter per engine (this project, llguidance, xgrammar, outlines-core).

Each adapter compiles a grammar given in one of the kinds it reads ("regex", "lark", "gbnf",
"json_schema"), makes matchers, fills a packed int32 bitmask and accepts tokens, so the harness
measures every engine through the same calls. Peers are optional: a missing package is reported,
not fatal.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from typing import Any

import numpy as np

from .vocabularies import BenchVocabulary


class Engine:
    """Base adapter: ``kinds`` lists the grammar kinds the engine reads, in preference order."""

    name = "?"
    kinds: tuple[str, ...] = ()

    def __init__(self, bv: BenchVocabulary) -> None:
        self.bv = bv

    def compile(self, kind: str, source: Any) -> Any:
        raise NotImplementedError

    def matcher(self, compiled: Any) -> Any:
        raise NotImplementedError

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        raise NotImplementedError

    def accept(self, matcher: Any, token: int) -> bool:
        raise NotImplementedError

    def is_accepting(self, matcher: Any) -> bool:
        raise NotImplementedError


class ThisProject(Engine):
    name = "constrained"
    kinds = ("regex", "lark", "gbnf", "json_schema")

    def __init__(self, bv: BenchVocabulary) -> None:
        super().__init__(bv)
        # a fresh disk cache so compile times are cold (removed when the process ends)
        cache = tempfile.mkdtemp(prefix="constrained-bench-")
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
        os.environ["CONSTRAINED_CACHE_DIR"] = cache
        self.schema_options: dict = {}   # Grammar.from_json_schema options

    def compile(self, kind: str, source: Any) -> Any:
        from constrained import Grammar, compile_grammar
        make = {"regex": Grammar.from_regex, "lark": getattr(Grammar, "from_lark", None),
                "gbnf": getattr(Grammar, "from_gbnf", None),
                "json_schema": getattr(Grammar, "from_json_schema", None)}[kind]
        if make is None:
            raise NotImplementedError(f"{kind} front-end not available")
        grammar = make(source, **self.schema_options) if kind == "json_schema" else make(source)
        return compile_grammar(grammar, self.bv.vocab)

    def matcher(self, compiled: Any) -> Any:
        return compiled.matcher()

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        matcher.fill_next_token_bitmask(bitmask)

    def accept(self, matcher: Any, token: int) -> bool:
        return matcher.accept_token(token)

    def is_accepting(self, matcher: Any) -> bool:
        return matcher.is_accepting()


class _ByteTokenizer:
    """What llguidance's TokenizerWrapper reads: token bytes, EOS, an encoder."""

    def __init__(self, bv: BenchVocabulary) -> None:
        vocab = bv.vocab
        self.tokens = list(vocab.token_bytes)
        self.eos_token_id = min(vocab.eos_token_ids)
        self.bos_token_id = None
        self.special_token_ids = sorted(vocab.special_token_ids)
        self._encode = bv.encode

    def __call__(self, text: str) -> list[int]:
        return self._encode(text)


class LLGuidance(Engine):
    name = "llguidance"
    kinds = ("regex", "lark", "gbnf", "json_schema")

    def __init__(self, bv: BenchVocabulary) -> None:
        super().__init__(bv)
        import llguidance
        self._ll = llguidance
        self.tokenizer = llguidance.LLTokenizer(
            llguidance.TokenizerWrapper(_ByteTokenizer(bv)), n_vocab=bv.vocab.size,
            eos_token=sorted(bv.vocab.eos_token_ids))

    def compile(self, kind: str, source: Any) -> Any:
        ll = self._ll
        if kind == "regex":
            grammar = ll.LLMatcher.grammar_from_regex(source)
        elif kind == "lark":
            grammar = ll.LLMatcher.grammar_from_lark(source)
        elif kind == "gbnf":
            grammar = ll.LLMatcher.grammar_from_lark(ll.gbnf_to_lark(source))
        else:
            grammar = ll.LLMatcher.grammar_from_json_schema(
                source if isinstance(source, str) else json.dumps(source),
                defaults={"whitespace_flexible": True})
        matcher = ll.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return grammar

    def matcher(self, compiled: Any) -> Any:
        return self._ll.LLMatcher(self.tokenizer, compiled, log_level=0)

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        from llguidance.numpy import fill_next_token_bitmask
        fill_next_token_bitmask(matcher, bitmask.reshape(1, -1), 0)

    def accept(self, matcher: Any, token: int) -> bool:
        return matcher.consume_token(token)

    def is_accepting(self, matcher: Any) -> bool:
        return matcher.is_accepting()


class XGrammar(Engine):
    name = "xgrammar"
    kinds = ("regex", "gbnf", "json_schema")

    def __init__(self, bv: BenchVocabulary) -> None:
        super().__init__(bv)
        import torch  # xgrammar fills torch tensors (imported here: the other engines do not)
        import xgrammar as xgr
        self._xgr = xgr
        self._from_numpy = torch.from_numpy
        self.info = xgr.TokenizerInfo(list(bv.vocab.token_bytes), xgr.VocabType.RAW,
                                      vocab_size=bv.vocab.size,
                                      stop_token_ids=sorted(bv.vocab.eos_token_ids))

    def compile(self, kind: str, source: Any) -> Any:
        compiler = self._xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        if kind == "regex":
            return compiler.compile_regex(source)
        if kind == "gbnf":
            return compiler.compile_grammar(source)
        return compiler.compile_json_schema(
            source if isinstance(source, str) else json.dumps(source), any_whitespace=True)

    def matcher(self, compiled: Any) -> Any:
        return self._xgr.GrammarMatcher(compiled)

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        matcher.fill_next_token_bitmask(self._from_numpy(bitmask).view(1, -1))

    def accept(self, matcher: Any, token: int) -> bool:
        return matcher.accept_token(token)

    def is_accepting(self, matcher: Any) -> bool:
        return matcher.is_completed() if hasattr(matcher, "is_completed") else \
            matcher.is_terminated()


class OutlinesCore(Engine):
    name = "outlines-core"
    kinds = ("regex", "json_schema")

    def __init__(self, bv: BenchVocabulary) -> None:
        super().__init__(bv)
        import outlines_core
        self._oc = outlines_core
        vocab = bv.vocab
        table: dict[bytes, list[int]] = {}
        for tid, tok in enumerate(vocab.token_bytes):
            if tok and tid not in vocab.special_token_ids:
                table.setdefault(tok, []).append(tid)
        self.vocabulary = outlines_core.Vocabulary(min(vocab.eos_token_ids), table)

    def compile(self, kind: str, source: Any) -> Any:
        if kind == "json_schema":
            from outlines_core.json_schema import build_regex_from_schema
            source = build_regex_from_schema(source if isinstance(source, str)
                                             else json.dumps(source))
        return self._oc.Index(source, self.vocabulary)

    def matcher(self, compiled: Any) -> Any:
        return self._oc.Guide(compiled)

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        matcher.write_mask_into(bitmask.ctypes.data, bitmask.size, 4)

    def accept(self, matcher: Any, token: int) -> bool:
        try:
            matcher.advance(token, return_tokens=False)
            return True
        except (ValueError, RuntimeError):
            return False

    def is_accepting(self, matcher: Any) -> bool:
        return matcher.is_finished()


ENGINES: dict[str, type[Engine]] = {cls.name: cls for cls in
                                    (ThisProject, LLGuidance, XGrammar, OutlinesCore)}
