"""Weibo post tagging: the same as ``zhbert train tagging ARGS`` (``--help`` lists them).

The recipe itself is package code, ``zhbert/recipes/tagging.py``, so it also runs from
an installed wheel and from the studies; this script is its entry point in a checkout.
"""

from zhbert.recipes import RECIPES

if __name__ == "__main__":
    RECIPES["tagging"].main()
