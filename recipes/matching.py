"""Sentence-pair matching: the same as ``zhbert train matching ARGS`` (``--help`` lists them).

The recipe itself is package code, ``zhbert/recipes/matching.py``, so it also runs from
an installed wheel and from the studies; this script is its entry point in a checkout.
"""

from zhbert.recipes import RECIPES

if __name__ == "__main__":
    RECIPES["matching"].main()
