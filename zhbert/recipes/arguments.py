"""A recipe's command-line arguments (one dataclass, parsed by ``HfArgumentParser``)
and presets; light to import, so the CLI lists recipes without loading torch."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

__all__ = ["RecipeArguments", "PRESETS", "apply_preset", "finalize_args", "parse_args", "run_cli"]


def _representations() -> list[str]:
    from ..fusion import REPRESENTATIONS

    return list(REPRESENTATIONS)


@dataclass
class RecipeArguments:
    dataset: str = field(default="", metadata={"help": "which dataset of the task (see --help of the recipe)"})
    train_file: str | None = field(
        default=None,
        metadata={"help": "train on your own file instead of a dataset (formats: --format; docs/using.md, Training on your own data)"},
    )
    validation_file: str | None = field(
        default=None, metadata={"help": "with --train-file: the dev split (default: --validation-share of the training rows)"}
    )
    test_file: str | None = field(default=None, metadata={"help": "with --train-file: scored at the end (default: the dev split)"})
    format: str = field(
        default="auto",
        metadata={
            "help": "with --train-file: ner conll|conll-words|wordtag (People's Daily's word/POS, its names as entities)"
            "|jsonl (CLUENER, CMeEE, doccano, Label Studio, Prodigy, tokens and ner_tags)|brat (a folder of .txt and .ann files)"
            "|markup (BosonNLP's {{TYPE:mention}}, YEDDA's [@mention#TYPE*])"
            "|parquet|arrow; cws words|conll (a character and its B/M/E/S tag a line)|conllu; "
            "pos wordtag|conllu (Universal Dependencies); tagging and matching "
            "tsv|csv|jsonl (CLUE's JSON lines)|parquet (the Hugging Face hub's)|arrow (a folder Dataset.save_to_disk wrote); "
            "auto: by extension (and by form)"
        },
    )
    validation_share: float = field(default=0.1, metadata={"help": "with --train-file and no --validation-file: the share held out as dev"})
    text_column: str = field(
        default="text",
        metadata={
            "help": "tagging CSV, JSON or Parquet: the text column (default: text, sentence, content, review, 文本, 内容, 句子 or 评论)"
        },
    )
    label_column: str = field(default="label", metadata={"help": "tagging and matching CSV, JSON or Parquet: the label column"})
    label_separator: str = field(
        default="",
        metadata={"help": "tagging TSV or CSV: what separates several labels of one text in its cell (e.g. ','): a multi-label file"},
    )
    entity_map: str = field(
        default="",
        metadata={
            "help": "ner, your own files: rename their entity types, e.g. NAME=PER,LOC,ORG (a bare type keeps its name), or "
            "cluener, weibo or resume for that dataset's map to PER/LOC/ORG; entities of the types it does not name are left out "
            "(tagged O) and counted. With --evaluate-only, maps a test file's types to the model's"
        },
    )
    encoder: str = field(
        default="electra",
        metadata={
            "help": "the encoder to fine-tune: a bundled model name (electra: the bundled heads' encoder; base: the masked LM), "
            "a local folder or a name in the Hugging Face cache; "
            "BERT (RoBERTa-wwm, MacBERT, RBT3), ELECTRA, ERNIE, ALBERT, RoFormer, DeBERTa-v2 or Megatron-BERT"
        },
    )
    random_init: bool = field(default=False, metadata={"help": "same architecture, random weights (the no-pretraining baseline)"})
    mode: str = field(default="finetune", metadata={"help": "finetune or frozen (feature-based)"})
    representation: str | None = field(
        default=None, metadata={"help": "how the head reads the encoder's layers: " + ", ".join(_representations())}
    )
    crf: bool = field(default=False, metadata={"help": "token heads: CRF layer with constrained decoding"})
    bilstm_layers: int = field(
        default=0,
        metadata={"help": "token heads: a BiLSTM of this many layers under the tagger (2: the BERT paper's feature-based NER head)"},
    )
    bilstm_hidden: int | None = field(
        default=None, metadata={"help": "the BiLSTM's hidden size each way (default: the encoder's); smaller is smaller and faster"}
    )
    bilstm_skip: bool = field(
        default=False, metadata={"help": "the tagger reads the features beside the BiLSTM's output, not its output alone"}
    )
    criteria: str | None = field(
        default=None,
        metadata={
            "help": "token heads on a dataset that mixes annotation standards (cws news+weibo: pku,weibo; ner msra+pd: "
            "msra,pd): the standards, comma-separated, the first the default; each sentence is read under its own as a "
            "segment id, and prediction chooses one (zhbert.load(..., criterion=...)); docs/recipes.md"
        },
    )
    carried_at_encoder_lr: bool = field(
        default=False,
        metadata={
            "help": "with a zhbert task folder as --encoder: the head layers it trained (word-feature tables, fusion, "
            "BiLSTM; the output layer and CRF too with --carry-output-layer) learn at the encoder's rate, not the head's (x20)"
        },
    )
    carry_output_layer: bool = field(
        default=False,
        metadata={
            "help": "with a zhbert folder of the same task as --encoder (same tags, scheme, CRF, BiLSTM, word features): its output "
            "layer and CRF carry over instead of starting anew, so training continues from it (e.g. a student's later stages)"
        },
    )
    lexicon: str | None = field(
        default=None,
        metadata={"help": "token heads: SoftLexicon word features from a dictionary (jieba: jieba's dict.txt, 349,046 words)"},
    )
    lexicon_words: str | None = field(
        default=None,
        metadata={
            "help": "token heads with --lexicon: a word list (a user-dictionary file: word [FREQ] [TAG] or word<TAB>TYPE) "
            "added to the dictionary's words for training; the model folder keeps it (lexicon_words.txt) and reads it back"
        },
    )
    lexicon_dim: int = field(default=50, metadata={"help": "token heads with --lexicon: size of each B/M/E/S word-set vector"})
    bigram_dim: int = field(default=0, metadata={"help": "token heads: character-bigram embeddings of this size (0: none)"})
    bigram_buckets: int = field(
        default=65536,
        metadata={"help": "token heads with --bigram-dim: rows of the hashed bigram table (fewer: a smaller model, more sharing)"},
    )
    static_embeddings: str | None = field(
        default=None,
        metadata={
            "help": "token heads with word features: a folder from `zhbert static-embeddings` whose word2vec vectors "
            "start the lexicon and bigram tables (default: random)"
        },
    )
    window: int | None = field(default=None, metadata={"help": "tokens per window incl. [CLS]/[SEP] (default: the model's)"})
    stride: int | None = field(default=None, metadata={"help": "tokens between window starts (default: half a window)"})
    window_align: str | None = field(
        default=None,
        metadata={
            "help": "long texts cut at: sentence (one per window), packed (whole sentences per window) "
            "or token (default: sentence for token heads, token otherwise)"
        },
    )
    window_pool: str = field(default="mean", metadata={"help": "sequence heads: mean or mean-max over windows"})
    truncate: bool = field(default=False, metadata={"help": "read only the first window of a long text (default: every window)"})
    pair_encoding: str = field(default="cross", metadata={"help": "pair heads: cross or bi"})
    preset: str = field(default="full", metadata={"help": "tiny (seconds on CPU, for tests) or full"})
    epochs: float = field(default=3.0, metadata={"help": "training epochs"})
    max_steps: int | None = field(default=None, metadata={"help": "stop after this many optimizer steps (overrides epochs)"})
    batch_size: int | None = field(default=None, metadata={"help": "examples per step (default 32)"})
    learning_rate: float | None = field(default=None, metadata={"help": "encoder learning rate (default 5e-5; 1e-3 frozen)"})
    head_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "learning rate of the head's own layers (output layer, CRF, BiLSTM, fusion, word-feature tables); "
            "default: the learning rate x 20 when fine-tuning, the learning rate when frozen"
        },
    )
    classifier_dropout: float | None = field(
        default=None,
        metadata={"help": "dropout before the head's BiLSTM and output layer (default: the encoder's hidden dropout, 0.1)"},
    )
    hidden_dropout: float | None = field(
        default=None, metadata={"help": "the encoder's dropout between its layers (default: the checkpoint's, 0.1 in zhbert's)"}
    )
    warmup: float = field(default=0.1, metadata={"help": "linear warm-up: a fraction of the steps (below 1) or a number of steps"})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    extra_train: str | None = field(
        default=None,
        metadata={
            "help": "added to the training split: for cws a file of words separated by spaces, one sentence per line "
            "(e.g. a teacher's silver segmentation); for ner a file of one character "
            "and its tag a line, blank lines between sentences, in the dataset's scheme and types "
            "(e.g. a teacher's silver tags); for matching and tagging a TSV or CSV file as --train-file reads it, "
            "with the dataset's labels (e.g. paraphrase pairs; docs/recipes.md)"
        },
    )
    extra_train_weight: float = field(
        default=1.0,
        metadata={
            "help": "with --extra-train: how much each extra sentence's loss counts, a gold sentence's counting 1 "
            "(below 1: a teacher's silver labels trusted less than gold)"
        },
    )
    extra_train_criterion: str | None = field(
        default=None,
        metadata={"help": "with --extra-train and --criteria: the annotation standard of the extra sentences (one of --criteria)"},
    )
    layer_lr_decay: float = field(
        default=1.0,
        metadata={
            "help": "below 1: the encoder's layer i of L learns at the learning rate x this^(L - i), its embeddings at "
            "x this^L, so the lower layers move least (ELECTRA's layer-wise decay; 0.8 is usual); 1: off"
        },
    )
    mention_replacement: int = field(
        default=0,
        metadata={
            "help": "ner: add this many passes of copies of the training sentences, each entity in a copy replaced with "
            "probability 0.5 by a random training entity of its type (Dai & Adel 2020); 0: off"
        },
    )
    mention_names: str | None = field(
        default=None,
        metadata={
            "help": "ner, with --mention-replacement: the names the copies bring in come from this file, one name and its "
            "type a line (word<TAB>TYPE, as a user dictionary), e.g. companies the training sources never name; "
            "entities of a type the file lacks stay as they are"
        },
    )
    mention_runs: str = field(
        default="",
        metadata={
            "help": "ner: entity types, comma-separated (e.g. PER): add one copy of each training sentence with such an "
            "entity, one of them replaced by 2-5 training entities of its type written back to back, as news text lists "
            "names; empty: off"
        },
    )
    fgm_epsilon: float = field(
        default=0.0,
        metadata={
            "help": "adversarial training (FGM): every step also trains on the encoder's word embeddings moved this far "
            "(L2 norm) along the loss gradient; about twice the training time (0: off; 1.0 is the usual value)"
        },
    )
    rdrop_alpha: float = field(
        default=0.0,
        metadata={
            "help": "token heads: R-Drop (Liang et al. 2021): every batch passes twice under different dropout masks and the "
            "loss adds this weight times the symmetric KL divergence of the two passes' per-token tag distributions; "
            "about twice the training time (0: off; 1.0 is usual)"
        },
    )
    distill_from: str | None = field(
        default=None,
        metadata={
            "help": "token heads: a trained token head (bundled name or folder; same tags, same vocabulary) whose "
            "tag distributions the head also learns (soft-target distillation, Hinton et al. 2015; a CRF's marginals on "
            "either side): the teacher reads the training examples once before training"
        },
    )
    distill_alpha: float = field(
        default=0.5,
        metadata={"help": "with --distill-from: the soft targets' share of the loss, the tags' own loss taking the rest"},
    )
    distill_temperature: float = field(
        default=1.0,
        metadata={"help": "with --distill-from: softens the teacher's and the student's tag distributions (above 1: softer)"},
    )
    add_dev_to_train: bool = field(
        default=False,
        metadata={
            "help": "train on the training and dev splits together: the final fit, once the settings were chosen on dev "
            "(--score-on dev); scored on test (refused with --score-on dev or --best-epoch-on-dev, and where a dataset's "
            "headline score is on its dev split)"
        },
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "use only the first N training examples"})
    max_eval_samples: int | None = field(default=None, metadata={"help": "score only the first N evaluation examples"})
    score_on: str = field(
        default="test",
        metadata={"help": "the split scored: test, or dev (to choose settings such as a learning rate without looking at test)"},
    )
    best_epoch_on_dev: bool = field(
        default=False,
        metadata={
            "help": "score the dev split after every epoch (the recipe's own decoding and scorer) and end on the best "
            "epoch's weights, not the last; the epochs' dev scores go into metrics.json's notes"
        },
    )
    document_context: bool = field(
        default=False,
        metadata={
            "help": "token heads: read each split's sentences in file order as the documents they come from: training and "
            "scoring windows hold as many consecutive whole sentences as fit, so a sentence is tagged with its neighbours in view "
            "(the BERT paper's document context for NER); the model is saved to read long texts the same way (window_align packed)"
        },
    )
    average_last_epochs: int = field(
        default=0,
        metadata={"help": "end on the mean of the weights at the ends of the last N epochs (checkpoint averaging; 0: the last weights)"},
    )
    save_steps: int = field(
        default=0,
        metadata={
            "help": "checkpoint every N optimizer steps and at every epoch's end into OUTPUT/checkpoints (the newest two "
            "complete ones kept); a rerun of the same command resumes from the last, and one with other settings or "
            "data is refused (0: no checkpoints)"
        },
    )
    output_dir: str = field(
        default="runs/recipe", metadata={"help": "folder for model/ and metrics.json (also --output)", "aliases": ["--output", "-o"]}
    )
    save_model: bool = field(default=True, metadata={"help": "save the fine-tuned model to OUTPUT/model (--no-save-model: scores only)"})
    evaluate_only: str | None = field(default=None, metadata={"help": "score this saved model instead of training"})
    seed: int = field(default=42, metadata={"help": "random seed"})
    init_seed: int | None = field(
        default=None,
        metadata={
            "help": "seed of the weights a run starts with: its new head layers and word-feature tables (default: --seed). "
            "Runs that share it and differ in --seed (data order, dropout, augmentation copies) start from the same "
            "weights, the setting `zhbert soup` averages best"
        },
    )
    max_unk_rate: float = field(
        default=0.05,
        metadata={
            "help": "stop when more of the training tokens than this are [UNK] (the vocabulary cannot read the text); 1 turns the check off"
        },
    )


def run_cli(run) -> None:
    """Call ``run()`` for a command line; bad data or models end with one clear line
    (exit code 1), not a traceback."""
    import sys

    from ..errors import Interrupted, ZhbertError
    from ..training.process_group import close_process_group

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        run()
    except Interrupted as e:  # Ctrl-C or SIGTERM: the step reached and where a rerun resumes
        print(f"\nerror: {e}", file=sys.stderr)  # the newline ends a progress bar's line
        sys.exit(e.exit_code)
    except (ZhbertError, FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    close_process_group()  # under torchrun: before the interpreter stops, or a rank can abort at exit


PRESETS = {
    "tiny": dict(max_train_samples=32, max_eval_samples=16, max_steps=6, batch_size=8),
    "full": dict(max_steps=-1, batch_size=32),
}


def apply_preset(args: RecipeArguments) -> RecipeArguments:
    if args.preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {args.preset!r}")
    for k, v in {**PRESETS["full"], **PRESETS[args.preset]}.items():
        if getattr(args, k) is None:  # an explicit flag wins over the preset
            setattr(args, k, v)
    return args


def parse_args(argv: list[str] | None = None, prog: str | None = None, description: str | None = None) -> RecipeArguments:
    """Arguments from ``argv`` (default: the command line), preset applied."""
    from ..options import dataclass_parser, parse_into

    return parse_into(dataclass_parser(RecipeArguments, prog or "zhbert train", description), argv)


def finalize_args(args: RecipeArguments, default_dataset: str) -> RecipeArguments:
    """The preset's values for every unset option, and the recipe's default dataset unless the
    training data is the user's own file (then ``dataset`` stays empty: the record names no dataset
    that was not read)."""
    args = apply_preset(args)
    if args.train_file and args.dataset:
        raise ValueError(f"--dataset {args.dataset} and --train-file {args.train_file} both name the training data: give one")
    if not args.train_file:
        args.dataset = args.dataset or default_dataset
    return args
