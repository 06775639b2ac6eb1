"""Part-of-speech tagging with word segmentation: the same as ``zhbert train pos ARGS`` (``--help`` lists them).

The recipe itself is package code, ``zhbert/recipes/pos.py``, so it also runs from
an installed wheel and from the studies; this script is its entry point in a checkout.
"""

from zhbert.recipes import RECIPES

if __name__ == "__main__":
    RECIPES["pos"].main()
