"""``zhbert pretrain``: masked-LM pretraining from scratch or from a checkpoint.

Runs on HF ``Trainer``: DDP under ``torchrun``/``accelerate launch`` (gloo on
CPU, nccl on GPU), checkpoints every ``save_steps`` with crash-safe resume (a
rerun of the same command continues from the last *complete* checkpoint), a
JSON-lines loss log and a loss-curve PNG. The result is a plain
``save_pretrained`` folder that ``AutoModelForMaskedLM`` loads.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from ..encoder_info import KEY as ENCODER_KEY
from ..encoder_info import record_encoder, trained_length
from ..masking import MASKERS, MaskingConfig, get_masker
from ..tokenizer import build_tokenizer, check_unk_rate, load_tokenizer, normalizer_name, save_tokenizer
from .checkpoints import CompleteCheckpointCallback, FaultInjection, storage_errors, train_or_restore
from .mlm_collator import MaskingCollator
from .mlm_model import SparseBertForMaskedLM, SparseBertForPreTraining
from .nsp_pairs import pair_segments
from .portable_corpus import SUFFIX, check_destination_file, is_portable_corpus, load_portable_corpus, save_portable_corpus
from .positions import init_positions_sinusoidal
from .pretrain_data import pack, prepare
from .sizes import SIZES, bert_config
from .step_log import read_step_log
from .stop_signals import interrupted, terminate_as_interrupt

logger = logging.getLogger("zhbert")
OBJECTIVES = ("mlm", "electra")

__all__ = ["PretrainConfig", "pretrain", "save_untrained", "prepare_corpus", "load_init_model"]


def _help(text: str, **extra) -> dict:
    return {"help": text, **extra}


@dataclass
class PretrainConfig:
    """Every pretraining option, declared once: ``zhbert pretrain`` parses its command line
    from this dataclass (``HfArgumentParser``; ``--max_length`` and ``--max-length`` both work)."""

    corpus: list[str] = field(
        default_factory=list,
        # repeated --corpus flags add up (argparse's default would keep only the last)
        metadata=_help("text files or folders (*.txt), one document per line, or one *.zhcorpus file", action="extend"),
    )
    output: str = field(
        default="runs/pretrain",
        metadata=_help(
            "output folder (checkpoints, loss log, final/); also --output-dir, as zhbert train spells it",
            aliases=["--output-dir", "--output_dir", "-o"],
        ),
    )
    objective: str = field(
        default="mlm",
        metadata=_help(
            "mlm (masked LM: the encoder predicts the masked tokens) or electra (replaced-token detection: "
            "a small generator fills the masked units, the encoder tells replaced tokens from originals at every position)"
        ),
    )
    masking: str = field(
        default="auto",
        metadata=_help(
            "masking strategy (for electra: the generator's): "
            + ", ".join(MASKERS)
            + "; auto: the one the --init model was pretrained with, where zhbert recorded it (the bundled base: mixed), else wwm"
        ),
    )
    size: str = field(default="mini", metadata=_help("model size from scratch: " + ", ".join(SIZES) + " (ignored with --init)"))
    init: str | None = field(
        default=None,
        metadata=_help(
            "continue from a bundled model (base), a local folder or a name in the Hugging Face cache: any BERT; "
            "ERNIE, ALBERT, RoFormer, DeBERTa-v2 or Megatron-BERT with --objective mlm"
        ),
    )
    max_length: int = field(default=128, metadata=_help("tokens per packed block"))
    batch_size: int = field(default=64, metadata=_help("blocks per device per step"))
    grad_accum: int = field(default=1, metadata=_help("gradient accumulation steps"))
    learning_rate: float = field(default=5e-4, metadata=_help("peak learning rate"))
    warmup: float = field(default=0.06, metadata=_help("warm-up: a fraction of the steps (< 1) or a number of steps"))
    weight_decay: float = field(default=0.01, metadata=_help("AdamW weight decay"))
    max_steps: int = field(default=1000, metadata=_help("optimizer steps"))
    save_steps: int = field(default=200, metadata=_help("checkpoint every N steps (a rerun resumes from the last complete one)"))
    logging_steps: int = field(default=20, metadata=_help("loss log every N steps"))
    seed: int = field(default=42, metadata=_help("seed of every random draw (fresh weights, masking, dropout): one seed repeats a run"))
    num_proc: int = field(default=2, metadata=_help("processes for word-boundary preprocessing"))
    max_docs: int | None = field(default=None, metadata=_help("use only the first N documents (tests, quick runs)"))
    doc_format: str = field(
        default="auto",
        metadata=_help(
            "line (a document a line), blank-line (blank lines between documents), jsonl (a JSON object a line), "
            "csv (a header row, then a row a document), parquet (a row a document, as the Hugging Face hub serves corpora), "
            "arrow (a folder Dataset.save_to_disk wrote); auto: jsonl for .jsonl/.json files, csv for .csv, parquet for "
            ".parquet, arrow for such a folder, line otherwise"
        ),
    )
    text_key: str = field(
        default="auto",
        metadata=_help(
            "jsonl, csv and parquet: the key (column) of each record's text (auto: text, else content, else review); "
            "keys joined by commas, "
            "such as title,content, give a line each"
        ),
    )
    user_dict: str | None = field(default=None, metadata=_help("jieba user dictionary for word/entity units"))
    mask_rate: float = field(default=0.15, metadata=_help("share of units selected for prediction"))
    dataloader_workers: int = field(default=0, metadata=_help("processes that mask batches while the model trains (GPU runs)"))
    nsp: bool = field(default=False, metadata=_help("add next-sentence prediction (BertForPreTraining)"))
    sop: bool = field(
        default=False,
        metadata=_help("add sentence-order prediction instead (ALBERT: A and B consecutive, swapped in half the pairs; the NSP head)"),
    )
    position_init: str = field(
        default="auto",
        metadata=_help(
            "position embeddings: auto (sinusoidal from scratch, the checkpoint's own with --init), "
            "sinusoidal (overwrite, also with --init) or normal (BERT's N(0, 0.02) from scratch); docs/pretraining.md"
        ),
    )
    generator_width: float = field(
        default=0.25, metadata=_help("electra: the generator's hidden size as a share of the encoder's (same depth)")
    )
    rtd_weight: float = field(default=50.0, metadata=_help("electra: weight of the replaced-token loss against the generator's"))
    freeze_encoder_steps: int = field(
        default=0,
        metadata=_help(
            "with --init: for the first N steps train only the parts around the encoder (electra: the generator and "
            "replaced-token head; mlm: the masked-LM head), the encoder and its embeddings held as --init has them, "
            "then everything; for a run whose generator or head starts new, so that its first, random gradients do not "
            "reach the encoder. One process only; 0: off"
        ),
    )
    extend_vocab: int = field(
        default=0,
        metadata=_help(
            "give each character the corpus writes at least this often, and the vocabulary reads as [UNK], an entry of its own "
            "(a new row that starts as [UNK]'s); 0: off. Counted over the whole corpus once; a resumed run adds the same ones"
        ),
    )
    eval_corpus: list[str] = field(
        default_factory=list,
        metadata=_help(
            "held-out text of your domain that the run does not train on (read as --corpus is): at the start and every "
            "--eval-steps the model fills blanks in it (characters and whole jieba words; the same blanks each time) and "
            "eval_log.jsonl gets its fill-mask accuracy and perplexity (with electra also the discriminator's accuracy)",
            action="extend",
        ),
    )
    eval_split: float = field(
        default=0.0,
        metadata=_help(
            "instead of --eval-corpus, hold out this share of the corpus's documents (every Nth, from each source) "
            "and train on the rest; 0: none"
        ),
    )
    eval_steps: int = field(default=0, metadata=_help("evaluate on --eval-corpus every N steps; 0: at every checkpoint (--save-steps)"))
    eval_chars: int = field(default=100_000, metadata=_help("read this many characters of --eval-corpus (its first ones)"))
    max_unk_rate: float = field(
        default=0.05,
        metadata=_help("stop when more tokens than this are [UNK] (the vocabulary cannot read the corpus); 1 turns the check off"),
    )

    def __post_init__(self):
        if self.masking != "auto" and self.masking not in MASKERS:
            raise ValueError(f"unknown masking {self.masking!r}; choose one of {', '.join(MASKERS)} or auto")
        if self.nsp and self.sop:
            raise ValueError("--nsp and --sop both train the one pair head: choose one")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose {' or '.join(OBJECTIVES)}")
        if self.objective == "electra" and (self.nsp or self.sop):
            raise ValueError("--objective electra trains no pair head: drop --nsp/--sop")
        if self.eval_split and self.eval_corpus:
            raise ValueError("--eval-split holds out part of --corpus; --eval-corpus gives other text: choose one")
        if self.eval_split and not 0 < self.eval_split < 0.5:
            raise ValueError(f"--eval-split is a share of the documents between 0 and 0.5, got {self.eval_split}")
        if self.eval_split and any(is_portable_corpus(c) for c in self.corpus):
            raise ValueError(
                f"--eval-split holds out text, and a {SUFFIX} file is already tokenised: give the text corpus, or --eval-corpus"
            )
        if self.freeze_encoder_steps < 0:
            raise ValueError(f"--freeze-encoder-steps must be 0 or more, got {self.freeze_encoder_steps}")
        if self.freeze_encoder_steps and not self.init:
            raise ValueError("--freeze-encoder-steps holds an --init encoder while its new parts learn; from scratch every part is new")
        if self.freeze_encoder_steps >= self.max_steps > 0:
            raise ValueError(
                f"--freeze-encoder-steps {self.freeze_encoder_steps} of --max-steps {self.max_steps}: the encoder would never train"
            )
        if self.eval_steps < 0 or self.eval_chars < 1:
            raise ValueError("--eval-steps must be 0 or more and --eval-chars 1 or more")
        trained = {Path(c).resolve() for c in self.corpus}
        for path in self.eval_corpus:
            if Path(path).resolve() in trained:
                raise ValueError(f"--eval-corpus {path} is also given to --corpus: held-out text must be text the run does not train on")

    @property
    def pair_objective(self) -> str | None:
        """ "nsp", "sop" or None (masked LM on packed blocks)."""
        return "sop" if self.sop else "nsp" if self.nsp else None


class _EpochSetter(TrainerCallback):
    """Tell the collator the epoch so masks differ per epoch yet replay on resume."""

    def __init__(self, collator):
        self.collator = collator

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.collator.epoch = int(state.epoch or 0)


class _LossParts(TrainerCallback):
    """Adds the means of a model's loss parts (``model.running``, as electra keeps) to each log row."""

    def on_log(self, args, state, control, logs=None, model=None, **kwargs):
        running = getattr(model, "running", None)
        if logs is not None and running is not None and "loss" in logs:
            logs.update(running.pop())


class _Throughput(TrainerCallback):
    """Adds token slots per second and MFU (useful FLOPs over the fp32 matmul peak of this run's threads:
    :mod:`zhbert.training.flops`) to each log row. The peak is measured at the start and again at a log at
    most once a ``recheck_s``, keeping the highest: one measured while another process held the core
    (a test suite beside the run) read half the true peak, and the MFU against it above 1."""

    def __init__(self, collator, block_tokens: int, recheck_s: float = 60.0, frozen_steps: int = 0):
        self.collator, self.block_tokens, self.recheck_s = collator, block_tokens, recheck_s
        self.frozen_steps = frozen_steps  # --freeze-encoder-steps: those steps run no backward pass through the encoder
        self.peak = self.since = self.checked = None

    def on_train_begin(self, args, state, control, **kwargs):
        from .flops import matmul_peak

        self.peak = matmul_peak()
        self.checked = time.perf_counter()
        self.since = (self.checked, state.global_step)

    def on_log(self, args, state, control, logs=None, model=None, **kwargs):
        if logs is None or "loss" not in logs or self.since is None or state.global_step <= self.since[1]:
            return
        from .encoder_warmup import held_steps
        from .flops import train_flops_per_token

        now = time.perf_counter()
        steps = state.global_step - self.since[1]
        slots = steps * args.per_device_train_batch_size * args.gradient_accumulation_steps * self.block_tokens
        stats = self.collator.stats
        share = stats["masked"] / stats["tokens"] if stats["tokens"] else 0.15
        rate = slots / (now - self.since[0])
        if now - self.checked >= self.recheck_s:  # a private generator: the run's random state stays untouched
            from .flops import matmul_peak

            self.peak = max(self.peak, matmul_peak(trials=1))
            self.checked = time.perf_counter()
        logs["token_slots_per_s"] = round(rate, 1)
        frozen = held_steps(self.since[1], state.global_step, self.frozen_steps)
        per_token = (
            frozen * train_flops_per_token(model, self.block_tokens, share, encoder_trains=False)
            + (steps - frozen) * train_flops_per_token(model, self.block_tokens, share)
        ) / steps
        logs["mfu"] = round(per_token * rate / self.peak, 4)
        logs["matmul_peak_gflops"] = round(self.peak / 1e9, 1)
        logs["threads"] = torch.get_num_threads()  # a resume with another count is not bit for bit (_thread_note)
        self.since = (time.perf_counter(), state.global_step)  # the measurement's own time counts in no interval


class _LossLog(TrainerCallback):
    def __init__(self, path: Path, label: str):
        self.path = path
        self.label = label  # what the loss sums, for the plot
        # matplotlib is imported now, before training, not at the first checkpoint, so that the first save is not
        # slower than the rest; a stop that lands in an import the plot still makes (PIL's plugins) is unwrapped
        # by terminate_as_interrupt
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs and "loss" in logs:
            with open(self.path, "a") as f:
                # cpu_s: this process's CPU seconds so far (it restarts with a resumed process): equal-CPU comparisons
                row = {"step": state.global_step, **logs, "time": round(time.time(), 2), "cpu_s": round(time.process_time(), 1)}
                f.write(json.dumps(row) + "\n")

    def on_save(self, args, state, control, **kwargs):
        # refresh the curve with every checkpoint, so a long run always has an up-to-date plot
        if state.is_world_process_zero and self.path.is_file():
            _plot_loss(self.path, self.path.with_name("loss_curve.png"), self.label)


def _thread_note(loss_log: Path, threads: int) -> str | None:
    """A line for a resume with another thread count than the run's last logged step (None when the
    same, or when the log does not say): the loss is the same, but gradients are summed in another
    order, so the run goes on correctly without being bit for bit an uninterrupted run."""
    rows = read_loss_log(loss_log) if loss_log.is_file() else []
    before = next((row["threads"] for row in reversed(rows) if "threads" in row), None)
    if before is None or before == threads:
        return None
    return (
        f"this run used {before} thread{'s' if before != 1 else ''} and resumes with {threads}: it goes on correctly, "
        f"but not bit for bit as an uninterrupted run would (OMP_NUM_THREADS={before} for that)"
    )


def _encoder_type(path: Path) -> str:
    from ..encoders import read_encoder_config

    if not (path / "config.json").is_file():
        from ..model_folder import no_config_problem

        raise FileNotFoundError(no_config_problem(path))
    return read_encoder_config(path).model_type


def _check_bert(path: Path, why: str) -> None:
    model_type = _encoder_type(path)
    if model_type != "bert":
        raise ValueError(f"{path}: model_type {model_type!r} is not bert; {why}")


def load_init_model(init: str, nsp: bool = False):
    """Continue from a local checkpoint of any encoder type zhbert reads (``zhbert.encoders``);
    report the weights initialised fresh (a masked-LM head the checkpoint lacks). BERT runs the
    sparse masked LM (logits only at masked positions) and can add NSP/SOP; the others run
    transformers' own masked-LM class."""
    path = Path(init)
    model_type = _encoder_type(path)
    if model_type == "bert":
        cls = SparseBertForPreTraining if nsp else SparseBertForMaskedLM
    elif nsp:
        raise ValueError(f"{path}: NSP / SOP continue BERT's pair head; a {model_type} encoder continues with the masked LM alone")
    else:
        from ..encoders import masked_lm_class

        cls = masked_lm_class(model_type)
    model, info = cls.from_pretrained(
        str(path), local_files_only=True, trust_remote_code=False, output_loading_info=True, dtype=torch.float32
    )
    if info.get("missing_keys"):
        logger.warning("initialised fresh (not in %s): %s", path, sorted(info["missing_keys"]))
    if info.get("unexpected_keys"):
        logger.warning("ignored from %s (not part of a masked LM): %s", path, sorted(info["unexpected_keys"])[:10])
    return model, info


def read_loss_log(log_path: Path) -> list[dict]:
    """Rows of ``loss_log.jsonl`` by step; after a resume the steps since the last
    checkpoint are logged again, and the latest row for a step wins."""
    return read_step_log(log_path)


def plot_loss(stages: list[tuple[Path, str, int | None]], png: Path, title: str = "zhbert pretraining") -> None:
    """One curve per stage (loss log, label, last step kept), each continuing the
    step count where the previous stage's kept steps ended."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    offset = 0
    for log_path, label, upto in stages:
        rows = [r for r in read_loss_log(log_path) if upto is None or r["step"] <= upto]
        if not rows:
            continue
        ax.plot([offset + r["step"] for r in rows], [r["loss"] for r in rows], label=label)
        offset += upto if upto is not None else rows[-1]["step"]
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def _loss_label(cfg: PretrainConfig) -> str:
    if cfg.objective == "electra":
        return f"training loss (generator MLM + {cfg.rtd_weight:g} x replaced-token BCE)"
    return "training loss (MLM" + (f" + {cfg.pair_objective.upper()})" if cfg.pair_objective else ")")


def _plot_loss(log_path: Path, png: Path, label: str) -> None:
    plot_loss([(log_path, label, None)], png)


def _read_text_corpus(cfg: PretrainConfig, part: str = "train"):
    """The corpus's documents the run trains on (``part="train"``), or those ``--eval-split`` holds out (``"heldout"``)."""
    from ..data import read_corpus

    corpus = read_corpus(cfg.corpus, doc_format=cfg.doc_format, text_key=cfg.text_key)
    if cfg.max_docs:
        corpus = corpus.select(range(min(cfg.max_docs, len(corpus))))
    if cfg.eval_split:
        from .heldout import split_documents

        train, heldout = split_documents(len(corpus), cfg.eval_split)
        corpus = corpus.select(train if part == "train" else heldout)
    return corpus


def _extend_vocabulary(cfg: PretrainConfig, out: Path, tokenizer, model):
    """``--extend-vocab``: the tokenizer with the corpus's [UNK] characters added, the model grown to
    match (:mod:`zhbert.training.vocab_growth`). The first start of a run counts them and writes them
    to the run's folder; a resumed start (and every other rank) reads them back."""
    from .vocab_growth import ADDED_VOCAB, grow_model, grow_tokenizer, read_added, unknown_characters, write_added

    added = read_added(out)
    if added is not None and not cfg.extend_vocab:
        raise ValueError(f"{out / ADDED_VOCAB}: this run added {len(added)} characters to its vocabulary; resume it with --extend-vocab")
    if not cfg.extend_vocab:
        return tokenizer
    rows = model.get_input_embeddings().weight.shape[0]
    if rows != len(tokenizer):
        raise ValueError(
            f"--extend-vocab: the tokenizer has {len(tokenizer):,} tokens and the model {rows:,} embedding rows; they must match"
        )
    if added is None:
        if any(is_portable_corpus(c) for c in cfg.corpus):
            raise ValueError(f"--extend-vocab counts characters in text; a {SUFFIX} file is already tokenised: give the text corpus")
        found = unknown_characters(tokenizer, (row["text"] for row in _read_text_corpus(cfg)), cfg.extend_vocab)
        added = [c for c, _ in found]
        write_added(out, added)
        shown = ", ".join(f"{c} ({n:,})" for c, n in found[:20]) + (", ..." if len(found) > 20 else "")
        logger.warning("--extend-vocab %d: %d characters added to the vocabulary: %s", cfg.extend_vocab, len(added), shown or "none")
    if not added:
        return tokenizer
    grown = grow_tokenizer(tokenizer, added)
    grow_model(model, len(added), tokenizer.unk_token_id)
    return grown


def _prepared_corpus(cfg: PretrainConfig, tokenizer):
    """Token ids + unit ids: from a ``*.zhcorpus`` file as it is, else from text through :func:`prepare`."""
    portable = [c for c in cfg.corpus if is_portable_corpus(c)]
    if portable:
        if len(cfg.corpus) > 1:
            raise ValueError(f"a {SUFFIX} file is a whole prepared corpus: pass it alone to --corpus (got {len(cfg.corpus)} paths)")
        prepared = load_portable_corpus(portable[0], tokenizer, cfg.masking)
    else:
        corpus = _read_text_corpus(cfg)
        sample = (row["text"] for row in corpus)  # read lazily: the check stops at its character budget
        check_unk_rate(tokenizer, sample, f"corpus {', '.join(cfg.corpus)}", limit=cfg.max_unk_rate)
        return prepare(corpus, tokenizer, cfg.masking, num_proc=cfg.num_proc, user_dict=cfg.user_dict)
    if cfg.max_docs:
        prepared = prepared.select(range(min(cfg.max_docs, len(prepared))))
    return prepared


def prepare_corpus(
    corpus: list[str],
    output: str,
    masking: str = "wwm",
    tokenizer_from: str | None = None,
    num_proc: int = 2,
    doc_format: str = "auto",
    user_dict: str | None = None,
    max_docs: int | None = None,
    text_key: str = "auto",
) -> dict:
    """Run the word-boundary pass once and write a portable ``*.zhcorpus`` file (``zhbert prepare-corpus``)."""
    from ..data import read_corpus
    from ..models_registry import resolve_model_path

    check_destination_file(output)  # before the word-boundary pass, minutes on a large corpus
    tokenizer = _init_tokenizer(str(resolve_model_path(tokenizer_from))) if tokenizer_from else build_tokenizer()
    docs = read_corpus(corpus, doc_format=doc_format, text_key=text_key)
    if max_docs:
        docs = docs.select(range(min(max_docs, len(docs))))
    prepared = prepare(docs, tokenizer, masking, num_proc=num_proc, user_dict=user_dict)
    return save_portable_corpus(prepared, tokenizer, output, masking, sources=corpus)


def _is_electra_checkpoint(path: Path) -> bool:
    """A checkpoint of an ELECTRA run (generator, discriminator and its head in one folder), not a final folder."""
    config = path / "config.json"
    return config.is_file() and "zhbert_generator" in json.loads(config.read_text(encoding="utf-8"))


def _init_tokenizer(init: str):
    """The checkpoint's own tokenizer, or zhbert's bundled vocabulary for a folder without one."""
    if (Path(init) / "tokenizer.json").is_file() or (Path(init) / "vocab.txt").is_file():
        return load_tokenizer(init)
    return build_tokenizer()


def pretrain(cfg: PretrainConfig) -> Path:
    """Run (or resume) pretraining; returns the folder with the final model. The output folder is
    locked while it runs (``zhbert.training.lock``): a second run there refuses with this one's PID."""
    from contextlib import nullcontext
    from dataclasses import replace

    from ..models_registry import resolve_model_path
    from .lock import output_lock

    if cfg.init:  # a bundled model's name ("base") or a folder, as everywhere else
        cfg = replace(cfg, init=str(resolve_model_path(cfg.init)))
    if cfg.masking == "auto":
        cfg = replace(cfg, masking=_continued_masking(cfg.init))
    out = Path(cfg.output)
    rank0 = int(os.environ.get("RANK", "0")) == 0
    # a read-only or full disk ends in one line, also when it stops the folder or its lock being made
    with storage_errors(out):
        out.mkdir(parents=True, exist_ok=True)
        with output_lock(out) if rank0 else nullcontext():  # torchrun: rank 0 holds it for all
            # before the corpus is read: a rerun with other settings is refused at once, not after its preparation
            resume = _checked_resume(cfg, out) if rank0 else None
            return _pretrain(cfg, out, resume)


#: the options that decide a run's weights (with the number of processes): a resume must give the same
_RUN_DEFINING = (
    "corpus", "objective", "masking", "size", "init", "max_length", "batch_size", "grad_accum", "learning_rate", "warmup",
    "weight_decay", "max_steps", "seed", "max_docs", "doc_format", "text_key", "user_dict", "mask_rate", "nsp", "sop",
    "position_init", "generator_width", "rtd_weight", "freeze_encoder_steps", "extend_vocab", "eval_split",
)  # fmt: skip


def _run_record(cfg: PretrainConfig) -> dict:
    """What defines the run, by option as the command line spells it (paths resolved; --size only from scratch)."""
    values = asdict(cfg)
    values["corpus"] = [str(Path(c).resolve()) for c in cfg.corpus]
    for key in ("init", "user_dict"):
        values[key] = str(Path(values[key]).resolve()) if values[key] else None
    if cfg.init:
        values["size"] = None  # ignored with --init
    record = {"--" + key.replace("_", "-"): values[key] for key in _RUN_DEFINING}
    record["processes"] = int(os.environ.get("WORLD_SIZE", "1"))
    return record


def _checked_resume(cfg: PretrainConfig, out: Path) -> str | None:
    """The checkpoint to resume from (None: a fresh start), refusing one saved with other settings than these, or a
    folder of someone else's; ``--max-steps`` may grow or shrink, said in one line (the learning rate from there
    follows the new schedule)."""
    from .run_record import resume_checkpoint

    return resume_checkpoint(out, _run_record(cfg), adopt_unrecorded="a run begun by an earlier zhbert", may_change=("--max-steps",))


def _pretrain(cfg: PretrainConfig, out: Path, resume: str | None) -> Path:
    frozen = _frozen_encoder(cfg)
    tokenizer, model, init_config = _starting_model(cfg)

    args = TrainingArguments(
        output_dir=str(out),
        max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.learning_rate,
        warmup_steps=cfg.warmup,
        weight_decay=cfg.weight_decay,
        lr_scheduler_type="linear",
        logging_steps=cfg.logging_steps,
        save_steps=cfg.save_steps,
        save_total_limit=2,
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to=[],
        remove_unused_columns=False,
        dataloader_num_workers=cfg.dataloader_workers,
        use_cpu=not torch.cuda.is_available(),
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        disable_tqdm=False,
    )
    # rank 0 tokenises and segments first; the other ranks then read its Arrow cache
    with args.main_process_first(desc="corpus preprocessing"):
        tokenizer = _extend_vocabulary(cfg, out, tokenizer, model)
        prepared = _prepared_corpus(cfg, tokenizer)
        if cfg.pair_objective:
            blocks = pair_segments(prepared, tokenizer, cfg.max_length, seed=cfg.seed, num_proc=cfg.num_proc, objective=cfg.pair_objective)
        else:
            blocks = pack(prepared, tokenizer, cfg.max_length, num_proc=cfg.num_proc)
    heldout = _heldout_evaluation(cfg, out, tokenizer)
    masker = get_masker(cfg.masking, MaskingConfig(rate=cfg.mask_rate))
    collator = MaskingCollator(tokenizer, masker, seed=cfg.seed, record=os.environ.get("ZHBERT_RECORD_BATCHES"))
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=blocks,
        data_collator=collator,
        callbacks=[
            CompleteCheckpointCallback(),
            _EpochSetter(collator),
            _LossParts(),
            _Throughput(collator, cfg.max_length, frozen_steps=cfg.freeze_encoder_steps),
            *frozen,
            _LossLog(out / "loss_log.jsonl", _loss_label(cfg)),
            *heldout,
        ],
    )
    fault = FaultInjection()
    if fault.active:  # must run before the completion marker is written
        trainer.callback_handler.callbacks.insert(0, fault)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        holder = [resume]
        torch.distributed.broadcast_object_list(holder, src=0)
        resume = holder[0]
    if resume:
        note = _thread_note(out / "loss_log.jsonl", torch.get_num_threads())
        if note:
            logger.warning(note)
    if trainer.is_world_process_zero():  # checkpoints of a run begun without a record: its checks passed, record it
        from .run_record import write_record

        write_record(out, _run_record(cfg))
    with storage_errors(out, resume):
        try:
            with terminate_as_interrupt():
                train_or_restore(trainer, resume, cfg.max_steps)
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (kill, a scheduler's limit, a shutdown)
            raise interrupted(out, trainer, stop) from None
        final = out / "final"
        if trainer.is_world_process_zero():
            _save_final(trainer.model, tokenizer, cfg, init_config, blocks, final, out)
    return final


def _frozen_encoder(cfg: PretrainConfig) -> list:
    """``--freeze-encoder-steps``: the callback that holds the encoder for the run's first steps, or none."""
    if not cfg.freeze_encoder_steps:
        return []
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ValueError(
            "--freeze-encoder-steps runs in one process: DDP fixes at its start which parameters it reduces "
            "(run without torchrun, or without the option)"
        )
    from .encoder_warmup import FrozenEncoderSteps

    logger.warning(
        "--freeze-encoder-steps %d: the encoder is held for the first %d steps", cfg.freeze_encoder_steps, cfg.freeze_encoder_steps
    )
    return [FrozenEncoderSteps(cfg.freeze_encoder_steps)]


def _continued_masking(init: str | None) -> str:
    """``--masking auto``: the masking the ``--init`` model was pretrained with (its ``zhbert_pretrain.json``),
    else wwm. A model continued under another masking first unlearns part of what it was trained for: the
    bundled base (mixed masking) continued with wwm on held-out-scored novels lost 2 points of character
    fill-mask in 300 steps, where mixed gained (bench/domain_continuation.py, bench/LOG.md)."""
    record = Path(init) / "zhbert_pretrain.json" if init else None
    if record is None or not record.is_file():
        return "wwm"
    try:
        masking = json.loads(record.read_text(encoding="utf-8")).get("masking")
    except (OSError, ValueError, AttributeError):
        masking = None
    if masking not in MASKERS:
        logger.warning("%s records no masking zhbert knows (%r): --masking wwm", record, masking)
        return "wwm"
    logger.warning("--masking %s: the masking %s was pretrained with (give --masking to choose another)", masking, init)
    return masking


def _heldout_evaluation(cfg: PretrainConfig, out: Path, tokenizer) -> list:
    """``--eval-corpus``: the callback that scores the run on held-out text (:mod:`zhbert.training.heldout`), or none."""
    if not (cfg.eval_corpus or cfg.eval_split):
        return []
    from .heldout import EVAL_LOG, HeldOutEvaluation, heldout_text, read_heldout, spread

    if cfg.eval_corpus:
        heldout = read_heldout(cfg.eval_corpus, cfg.eval_chars, doc_format=cfg.doc_format, text_key=cfg.text_key, user_dict=cfg.user_dict)
        what = ""
    else:
        held = _read_text_corpus(cfg, part="heldout")
        heldout = heldout_text((held[i]["text"] for i in spread(range(len(held)))), cfg.eval_chars, ", ".join(cfg.corpus), cfg.user_dict)
        what = f", of the {len(held):,} documents --eval-split {cfg.eval_split:g} keeps out of training"
    logger.warning(
        "held-out text: %s characters of %s document%s%s%s; scores every %d steps in %s",
        f"{heldout.chars:,}",
        f"{heldout.documents_read:,}",
        "" if heldout.documents_read == 1 else "s",
        f" (cut at --eval-chars {cfg.eval_chars:,})" if heldout.cut else "",
        what,
        cfg.eval_steps or cfg.save_steps,
        out / EVAL_LOG,
    )
    return [HeldOutEvaluation(heldout, tokenizer, out / EVAL_LOG, cfg.eval_steps or cfg.save_steps, cfg.max_length)]


def save_untrained(cfg: PretrainConfig) -> Path:
    """Save the model ``pretrain(cfg)`` would start from, untrained, as ``<output>/final``.

    A from-scratch comparison needs it as its control: fine-tuned the same way, it shows
    whether pretraining helped at all (on little compute it may not). Same seed, size and
    position code as the real runs, so it is their exact step 0."""
    if cfg.init:
        raise ValueError("save_untrained is the start of a from-scratch run; with init the start is the init model itself")
    out = Path(cfg.output)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer, model, _ = _starting_model(cfg)
    final = out / "final"
    _save_final(model, tokenizer, replace(cfg, max_steps=0), None, (), final, out)
    return final


def _starting_model(cfg: PretrainConfig):
    """Tokenizer, model and (when continuing) the init model's config, before any step."""
    # Every weight drawn here (a whole model from scratch; the generator, replaced-token head or
    # masked-LM head a continued run's checkpoint lacks) comes from --seed: the Trainer seeds only
    # once it is built, after the model, so without this a rerun would start from other weights.
    torch.manual_seed(cfg.seed)
    init_config = None
    if cfg.objective == "electra":
        from .electra import ElectraPretrainingModel, generator_config

        if cfg.init and _is_electra_checkpoint(Path(cfg.init)):
            # a checkpoint of an ELECTRA run: every part continues, the replaced-token head too
            tokenizer = _init_tokenizer(cfg.init)
            model = ElectraPretrainingModel.from_pretrained(cfg.init, local_files_only=True, trust_remote_code=False, dtype=torch.float32)
            if model.rtd_weight != cfg.rtd_weight:
                raise ValueError(f"{cfg.init}: trained with --rtd-weight {model.rtd_weight:g}; continue it with the same")
            init_config = model.config.to_dict()
        elif cfg.init:
            tokenizer = _init_tokenizer(cfg.init)
            _check_bert(Path(cfg.init), "the ELECTRA objective trains a BERT discriminator (--objective mlm continues other encoders)")
            model, missing = ElectraPretrainingModel.from_bert(cfg.init, cfg.generator_width, cfg.rtd_weight)
            if missing:
                logger.warning("initialised fresh (not in %s): %s", cfg.init, missing)
            if "generator" in missing and not cfg.freeze_encoder_steps:
                # measured on 2,000 Weibo posts, 300 steps: the discriminator continued beside a new generator and
                # replaced-token head fine-tuned worse on all three Weibo tasks than before; with the encoder held
                # for the first 150 steps, on none (and better than unheld on all three)
                logger.warning(
                    "%s has no generator/: the generator and replaced-token head start new, and until they have learnt the "
                    "encoder is trained on their noise; continued so, an encoder can fine-tune worse than it started "
                    "(docs/pretraining.md). --freeze-encoder-steps N (such as half of --max-steps) holds the encoder while "
                    "they learn; fine-tune your task on the model before and after, and keep the better. An ELECTRA run's "
                    "final/ folder continues with its own generator",
                    cfg.init,
                )
            init_config = model.config.to_dict()
        else:
            tokenizer = build_tokenizer()
            config = bert_config(cfg.size, len(tokenizer), max_position_embeddings=max(512, cfg.max_length))
            model = ElectraPretrainingModel(config, generator_config(config, cfg.generator_width), rtd_weight=cfg.rtd_weight)
    elif cfg.init:
        tokenizer = _init_tokenizer(cfg.init)
        model, _ = load_init_model(cfg.init, nsp=cfg.pair_objective is not None)
        init_config = model.config.to_dict()
    else:
        tokenizer = build_tokenizer()
        model = (SparseBertForPreTraining if cfg.pair_objective else SparseBertForMaskedLM)(
            bert_config(cfg.size, len(tokenizer), max_position_embeddings=max(512, cfg.max_length))
        )
    if cfg.position_init not in ("auto", "sinusoidal", "normal"):
        raise ValueError(f"unknown position_init {cfg.position_init!r}; choose auto, sinusoidal or normal")
    if cfg.position_init == "normal" and cfg.init:
        raise ValueError("position_init='normal' re-draws nothing for a checkpoint; use auto to keep its positions")
    if cfg.position_init == "sinusoidal" and model.config.model_type != "bert":
        raise ValueError(f"position_init='sinusoidal' writes BERT's position table; a {model.config.model_type} encoder keeps its own")
    if cfg.position_init == "sinusoidal" or (cfg.position_init == "auto" and not cfg.init):
        init_positions_sinusoidal(model)  # a resumed run then loads its checkpoint's trained values over this
    if len(tokenizer) > model.config.vocab_size:
        raise ValueError(f"tokenizer has {len(tokenizer)} tokens but the model only {model.config.vocab_size}")
    return tokenizer, model, init_config


def _save_final(model, tokenizer, cfg: PretrainConfig, init_config: dict | None, blocks, final: Path, out: Path) -> None:
    """``final/``: a stock masked-LM folder (``--objective mlm``), or for electra the discriminator as a
    stock ``BertModel`` folder with the generator, a stock ``ElectraForMaskedLM``, in ``final/generator``."""
    # the longest sequence this encoder has now been trained on, over every stage
    seen = max(cfg.max_length, trained_length(init_config, cfg.init)) if cfg.init else cfg.max_length
    earlier = (init_config or {}).get(ENCODER_KEY)
    earlier = earlier if isinstance(earlier, dict) else None
    if cfg.objective == "electra":
        encoder_config = model.discriminator.config
        record_encoder(
            encoder_config, min(seen, encoder_config.max_position_embeddings), normalizer_name(tokenizer), continued_from=earlier
        )
        for key in ("zhbert_generator", "zhbert_rtd_weight"):  # the discriminator folder is a plain BertModel
            if hasattr(encoder_config, key):
                delattr(encoder_config, key)
        parts = model.save_parts(final)
        for folder in parts.values():
            save_tokenizer(tokenizer, folder, max_length=trained_length(encoder_config))
    else:
        model.config.architectures = [type(model).__name__.replace("Sparse", "")]
        record_encoder(model.config, min(seen, model.config.max_position_embeddings), normalizer_name(tokenizer), continued_from=earlier)
        model.save_pretrained(final)
        save_tokenizer(tokenizer, final, max_length=trained_length(model.config))
    (final / "zhbert_pretrain.json").write_text(json.dumps({**asdict(cfg), "blocks": len(blocks)}, indent=2, ensure_ascii=False))
    if (out / "loss_log.jsonl").is_file():
        _plot_loss(out / "loss_log.jsonl", out / "loss_curve.png", _loss_label(cfg))


def encoder_from_checkpoint(checkpoint: str | Path, output: str | Path, max_length: int = 128) -> Path:
    """The folder(s) ``final/`` would hold, from a pretraining checkpoint: a masked LM, or for an
    ELECTRA run the discriminator as a stock ``BertModel`` and its generator in ``generator/``. For
    probing a long run part way (``max_length``: its block length, when the checkpoint has no record)."""
    from ..model_folder import read_config
    from .electra import ElectraPretrainingModel

    checkpoint, output = Path(checkpoint), Path(output)
    config = read_config(checkpoint)
    tokenizer = load_tokenizer(checkpoint) if (checkpoint / "tokenizer.json").is_file() else build_tokenizer()
    common = dict(local_files_only=True, trust_remote_code=False, dtype=torch.float32)
    if "zhbert_generator" in config:
        model = ElectraPretrainingModel.from_pretrained(str(checkpoint), **common)
        target = model.discriminator.config
    elif config.get("model_type") == "bert":
        cls = SparseBertForPreTraining if "BertForPreTraining" in str(config.get("architectures")) else SparseBertForMaskedLM
        model = cls.from_pretrained(str(checkpoint), **common)
        target = model.config
    else:  # a masked-LM run continued on another encoder type
        from ..encoders import check_encoder_type, masked_lm_class

        cls = masked_lm_class(check_encoder_type(config.get("model_type"), checkpoint / "config.json"))
        model = cls.from_pretrained(str(checkpoint), **common)
        target = model.config
    if not isinstance(getattr(target, ENCODER_KEY, None), dict):
        record_encoder(target, max_length, normalizer_name(tokenizer))
    if "zhbert_generator" in config:
        for key in ("zhbert_generator", "zhbert_rtd_weight"):
            if hasattr(target, key):
                delattr(target, key)
        folders = list(model.save_parts(output).values())
    else:
        model.config.architectures = [cls.__name__.replace("Sparse", "")]
        model.save_pretrained(output)
        folders = [output]
    for folder in folders:
        save_tokenizer(tokenizer, folder, max_length=trained_length(target))
    return output
