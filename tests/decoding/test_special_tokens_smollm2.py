"""SmolLM2 with its own special tokens in a grammar: repository markup around generated code."""
import re

import pytest

from constrained import Grammar, generate

GRAMMAR = r'''
start: <filename> NAME "\n" LINE+ <file_sep>
NAME: /[a-z_]{1,12}\.py/
LINE: /[ -~]{0,60}\n/
'''


@pytest.mark.slow
def test_smollm2_writes_its_special_tokens_where_the_grammar_names_them(smollm2):
    model, tokenizer, vocab = smollm2
    filename, file_sep = (vocab.special_ids_by_text[b"<filename>"],
                          vocab.special_ids_by_text[b"<file_sep>"])
    for seed in range(3):
        r = generate(model, tokenizer, "<reponame>utils\n", grammar=Grammar.from_lark(GRAMMAR),
                     max_new_tokens=48, seed=seed, sampling={"temperature": 0.8},
                     complete_within_budget=True)
        assert r.finish_reason == "stop", r.text
        assert r.token_ids[0] == filename and r.token_ids[-1] == file_sep
        # the markup appears only as those tokens: the text between them holds none of it
        assert r.token_ids.count(filename) == 1 and r.token_ids.count(file_sep) == 1
        m = re.fullmatch(r"<filename>([a-z_]{1,12}\.py)\n((?:[ -~]{0,60}\n)+)<file_sep>", r.text)
        assert m, r.text
