"""Builds the C parts of the automata and of the CFG mask engine; everything else is in
pyproject.toml."""
from glob import glob

from setuptools import Extension, setup

_MODULES = ("_gc_untrack", "vocabulary._token_bytes", "automata._dfa_tables", "automata._subsets", "automata._tries", "cfg._walks", "cfg._product", "cfg._earley", "cfg._assemble", "cfg._lower")

setup(ext_modules=[Extension(f"constrained.{name}", [f"constrained/{name.replace('.', '/')}.c"],
                             depends=glob("constrained/**/*.h", recursive=True),
                             extra_compile_args=["-O3"])
                   for name in _MODULES])
