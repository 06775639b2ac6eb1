"""Masking study: pretrain the same configuration for the same steps under char / wwm /
ernie / ngram masking, with and without NSP, then fine-tune each on the four tasks.
Same as `zhbert study masking`.

    python bench/masking.py --corpus runs/corpus --output runs/study-masking --size tiny --steps 2000
"""

import sys

from zhbert.cli import app

if __name__ == "__main__":
    app(["study", "masking", *sys.argv[1:]])
