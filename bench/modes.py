"""Application-mode study: fine-tune vs feature-based x representation, 3 seeds each,
plus the BERT paper's feature-based NER table on Chinese. Same as `zhbert study modes`.

    python bench/modes.py --output runs/study-modes --encoder base
    python bench/modes.py --output runs/study-modes --task ner --max-train-samples 4000 --seed 1 --seed 2 --seed 3
"""

import sys

from zhbert.cli import app

if __name__ == "__main__":
    app(["study", "modes", *sys.argv[1:]])
