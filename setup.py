"""Builds the C parts of the CFG mask engine; everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[Extension(f"constrained.cfg.{name}", [f"constrained/cfg/{name}.c"],
                             extra_compile_args=["-O3"])
                   for name in ("_walks", "_product", "_earley", "_assemble")])
