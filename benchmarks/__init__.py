"""nnrpsim's speed figures: ``python -m benchmarks [--only GROUP] [--json FILE]``.

Each group measures nnrpsim against a baseline in the same run, so the ratios mean something on
any machine; no test asserts a time.
"""
