"""Save a head to one folder and load it back, with errors that name the file.

The folder is a plain ``save_pretrained`` folder: ``config.json`` (the encoder's config,
a BertConfig for BERT, with ``zhbert_head`` settings and ``id2label``), ``model.safetensors`` and the
tokenizer. Loading reads JSON and safetensors only: no pickle, no remote code.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch

from ..encoder_info import record_encoder, trained_length
from ..encoders import read_encoder_config
from ..errors import ModelLoadError
from ..tokenizer import normalizer_name, save_tokenizer
from .config import HeadConfig
from .criteria import add_criteria
from .model import ZhBertForTask, stock_architecture, task_model_class

__all__ = ["save_head", "load_head", "new_head", "attach_lexicon"]


def _error(path, problem: str) -> ModelLoadError:
    return ModelLoadError(f"{path}: {problem}")


LEXICON_WORDS_FILE = "lexicon_words.txt"


def new_head(
    encoder: str | Path,
    head: HeadConfig,
    lexicon_words: str | Path | None = None,
    classifier_dropout: float | None = None,
    hidden_dropout: float | None = None,
    carry_output_layer: bool = False,
) -> ZhBertForTask:
    """A fresh head on a pretrained encoder folder: a local checkpoint of any encoder type
    ``zhbert.encoders`` reads (BERT, ELECTRA, ERNIE, ALBERT, RoFormer, DeBERTa-v2, ...).

    ``lexicon_words``: a word-list file added to a lexicon head's dictionary (a domain's words);
    :func:`save_head` copies it into the model folder, which reads it back.
    ``classifier_dropout`` (before the head's BiLSTM and output layer) and ``hidden_dropout`` (the
    encoder's ``hidden_dropout_prob``) replace the checkpoint's values when given;
    they are written to the model folder's config.json with the rest.
    ``carry_output_layer``: ``encoder`` is a zhbert folder of the same task (same labels in the same
    order, scheme, CRF and features: ``_OUTPUT_FIELDS``), whose output layer and CRF carry over instead of starting
    anew: training continues (e.g. a student's later stages); anything else is refused."""
    if lexicon_words is not None and not head.lexicon:
        raise ValueError(f"{lexicon_words}: a word list is added to a lexicon; give the head one (--lexicon jieba)")
    for name, p in (("classifier_dropout", classifier_dropout), ("hidden_dropout", hidden_dropout)):
        if p is not None and not 0.0 <= p < 1.0:
            raise ValueError(f"{name} is a probability in [0, 1), got {p}")
    path = _check_folder(encoder)
    config = read_encoder_config(path)
    # A zhbert task folder (e.g. the bundled `ner`) may start another task: intermediate-task
    # transfer. Its layers of the same shape carry over (encoder, fusion, word-feature tables).
    saved_head = getattr(config, "zhbert_head", None)
    from_task = saved_head is not None
    if carry_output_layer:
        _check_same_output(path, saved_head, head)
    config.zhbert_head = head.to_dict()
    if classifier_dropout is not None:
        config.classifier_dropout = classifier_dropout
    if hidden_dropout is not None:
        config.hidden_dropout_prob = hidden_dropout
    model, info = task_model_class(config.model_type).from_pretrained(
        str(path),
        config=config,
        local_files_only=True,
        trust_remote_code=False,
        output_loading_info=True,
        dtype=torch.float32,
        ignore_mismatched_sizes=from_task,
    )
    prefix = model.base_model_prefix + "."
    encoder_missing = [k for k in info.get("missing_keys", []) if k.startswith(prefix) and "pooler" not in k]
    mismatched = [k[0] if isinstance(k, tuple) else k for k in info.get("mismatched_keys", [])]  # (name, shapes) in some versions
    encoder_missing += [k for k in mismatched if k.startswith(prefix)]
    if encoder_missing:
        raise _error(
            path,
            f"not a {config.model_type} encoder checkpoint: {len(encoder_missing)} encoder weights missing (e.g. {encoder_missing[0]})",
        )
    if from_task and not carry_output_layer:
        _restart_output_layers(model)
    if head.criteria:  # a segment id per annotation standard (criteria.py)
        add_criteria(model, head.criteria, (saved_head or {}).get("criteria", []))
    # Every head layer the folder trained and that keeps its weights here (word tables, fusion,
    # BiLSTM; the output layer and CRF only with carry_output_layer): `--carried-at-encoder-lr` trains these
    # at the encoder's rate, as the pretrained layers they are; static embeddings must not
    # overwrite the word tables among them (`seed_word_features` seeds only the tables that start here).
    not_loaded = set(info.get("missing_keys", [])) | set(mismatched)
    model.carried_head_parameters = tuple(
        name
        for name, _ in model.named_parameters()
        if from_task
        and not name.startswith((prefix,) if carry_output_layer else (prefix, "classifier.", "crf."))
        and name not in not_loaded
    )
    model.carried_word_tables = tuple(
        name for name in ("word_embeddings", "bigram_embeddings") if f"word_features.{name}.weight" in model.carried_head_parameters
    )
    if head.mode == "frozen":
        model.freeze_encoder()
    if head.lexicon:
        from ..dictionary import jieba_dictionary_path
        from ..lexicon import file_sha256
        from ..tokenizer import load_tokenizer

        model.head.lexicon_sha256 = file_sha256(jieba_dictionary_path())
        attach_lexicon(model, load_tokenizer(path), path, lexicon_words)  # records the word list's checksum
        model.config.zhbert_head = model.head.to_dict()
    return model


# What makes a saved output layer and CRF mean the same here: the tags, their order, how they are
# decoded, and the features the output layer reads (another encoder width fails as an encoder mismatch).
_OUTPUT_FIELDS = (
    "kind", "labels", "scheme", "crf", "multi_label", "regression", "representation", "bilstm_layers", "bilstm_hidden",
    "bilstm_skip", "lexicon", "lexicon_dim", "lexicon_buckets", "bigram_dim", "bigram_buckets",
)  # fmt: skip


def _check_same_output(path: Path, saved: dict | None, head: HeadConfig) -> None:
    if saved is None:
        raise _error(path, "--carry-output-layer: not a zhbert task folder (an encoder has no output layer to carry)")
    # read as a HeadConfig: a setting added after the folder was saved takes its default, as it does on loading
    carried = HeadConfig.from_dict(saved)
    for name in _OUTPUT_FIELDS:
        if getattr(carried, name) != getattr(head, name):
            raise _error(
                path,
                f"--carry-output-layer: its head has {name}={getattr(carried, name)!r}, this one {getattr(head, name)!r}; "
                "the output layer carries over only to the same task (leave the flag out to start it anew)",
            )


def _restart_output_layers(model: ZhBertForTask) -> None:
    """The output layer and CRF of a task model started from another task's folder begin anew:
    the same number of labels does not mean the same labels (MSRA's B-LOC is not People's
    Daily's B-LOC in another order). Drawn as a fresh head draws them."""
    std = model.config.initializer_range
    torch.nn.init.normal_(model.classifier.weight, std=std)
    torch.nn.init.zeros_(model.classifier.bias)
    if model.crf is not None:
        for p in (model.crf.transitions, model.crf.start, model.crf.end):
            torch.nn.init.zeros_(p)


def attach_lexicon(
    model: ZhBertForTask, tokenizer, folder: str | Path | None = None, lexicon_words: str | Path | None = None
) -> ZhBertForTask:
    """Give a lexicon head its dictionary matcher (read with the model's own tokenizer).

    The dictionary is the one the head was trained with: its SHA-256 is in the folder's
    config, and a different ``dict.txt`` (another jieba version) is refused by name rather
    than silently feeding the head words it never saw. So is the word list added to it in
    training, the folder's ``lexicon_words.txt``: missing or changed, it is refused, naming the
    file. ``lexicon_words`` (a head about to be trained): that list is added and its checksum recorded."""
    h = model.head
    if not h.lexicon or model.word_features is None:
        return model
    from ..dictionary import jieba_dictionary_path
    from ..lexicon import file_sha256
    from ..lexicon_cache import shared_lexicon

    path = jieba_dictionary_path()
    if h.lexicon_sha256 and file_sha256(path) != h.lexicon_sha256:
        raise _error(
            folder or "model",
            f"the head was trained with a different {path.name} (SHA-256 {h.lexicon_sha256[:12]}...) than the installed {path}: "
            "install the jieba version it was trained with (jieba==0.42.1)",
        )
    lexicon = shared_lexicon(h.lexicon, tokenizer, h.lexicon_buckets)
    # the word list's bytes, read once: save_head writes them, so a file edited while the model
    # trains cannot make a folder disagree with its checksum
    data = None
    if lexicon_words is not None:
        words = Path(lexicon_words)
        data = words.read_bytes()
        h.lexicon_words_sha256 = hashlib.sha256(data).hexdigest()
    elif h.lexicon_words_sha256:
        words = Path(folder or ".") / LEXICON_WORDS_FILE
        if not words.is_file():
            raise _error(words, "missing: the head was trained with this word list added to its lexicon")
        data = words.read_bytes()
        if hashlib.sha256(data).hexdigest() != h.lexicon_words_sha256:
            raise _error(words, f"not the word list the head was trained with (SHA-256 {h.lexicon_words_sha256[:12]}...)")
    if data is not None:
        from ..dictionary import read_dictionary

        lexicon = lexicon.with_words(read_dictionary(words), tokenizer)
    model.lexicon_words = data
    model.word_features.lexicon = lexicon
    return model


def save_head(model: ZhBertForTask, tokenizer, path: str | Path) -> Path:
    path = Path(path)
    h = model.head
    model.config.zhbert_head = h.to_dict()
    # a regression head's one output too: without it plain transformers builds a 2-output classifier and refuses the weights
    model.config.id2label = dict(enumerate(h.labels))
    model.config.label2id = {l: i for i, l in enumerate(h.labels)}
    model.config.problem_type = (
        ("regression" if h.regression else "multi_label_classification" if h.multi_label else "single_label_classification")
        if h.kind != "token"
        else None
    )
    words = getattr(model, "lexicon_words", None)
    if h.lexicon_words_sha256 and words is None:
        raise ValueError("this head was trained with a word list added to its lexicon, but has none attached (attach_lexicon)")
    from ..model_card import ZHBERT_ONLY_KEY, write_model_card, zhbert_only_note, zhbert_only_reasons

    reasons = zhbert_only_reasons(h, model.config.model_type)
    if reasons:  # plain transformers would open the encoder under a wrong head: say so where it looks
        setattr(model.config, ZHBERT_ONLY_KEY, zhbert_only_note(reasons))
    elif hasattr(model.config, ZHBERT_ONLY_KEY):
        delattr(model.config, ZHBERT_ONLY_KEY)
    out = save_folder(model, tokenizer, path)
    stock = stock_architecture(h, model.config.model_type)
    if stock:  # save_pretrained names the class that saved it; name the one plain transformers has
        import json

        saved = json.loads((path / "config.json").read_text(encoding="utf-8"))
        saved["architectures"] = [stock]
        (path / "config.json").write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if h.lexicon_words_sha256:
        (path / LEXICON_WORDS_FILE).write_bytes(words)
    write_model_card(path, h, reasons)
    return out


def save_folder(model, tokenizer, path: str | Path) -> Path:
    """``save_pretrained`` plus the tokenizer, with the encoder record: what the encoder saw in
    pretraining travels with every head; the record also tells load_tokenizer that this
    folder's tokenizer is authoritative (not an older zhbert folder)."""
    path = Path(path)
    record_encoder(model.config, trained_length(model.config), normalizer_name(tokenizer) if tokenizer is not None else "tokenizer")
    model.save_pretrained(str(path))
    if tokenizer is not None:
        save_tokenizer(tokenizer, path, max_length=trained_length(model.config))
    return path


def _check_folder(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_dir():
        raise _error(path, "not a folder")
    cfg = path / "config.json"
    if not cfg.is_file():
        raise _error(cfg, "config.json is missing")
    from ..models_registry import read_config

    read_config(path)  # size, nesting and syntax checked, the error naming the file
    from safetensors import safe_open

    from ..model_folder import weight_files

    for weights in weight_files(path):  # model.safetensors, or the shards its index names
        try:
            with safe_open(str(weights), framework="pt") as f:
                for k in f.keys():
                    f.get_slice(k)
            size = weights.stat().st_size
            with open(weights, "rb") as fh:
                header = int.from_bytes(fh.read(8), "little")
            if size < 8 + header:
                raise ValueError("file is shorter than its header says")
        except Exception as e:
            raise _error(weights, f"corrupt or truncated safetensors file ({e})") from None
    return path


def plain_head_settings(config: dict, where: Path, pairs: bool = False) -> HeadConfig | None:
    """The zhbert head a plain transformers classifier folder is (``*ForTokenClassification``, or a
    pooled ``*ForSequenceClassification``, as ``run_ner.py`` and ``run_glue.py`` save them), read
    from its ``architectures`` and ``id2label``; None for a folder that is no such classifier. A
    classifier zhbert cannot compute (another head shape, or tags of no scheme) is refused by name."""
    from ..encoders import check_encoder_type, plain_head_class
    from ..tags import parse_tag

    architectures = config.get("architectures") or []
    if config.get("zhbert_head") or not isinstance(architectures, list) or len(architectures) != 1:
        return None
    model_type = check_encoder_type(config.get("model_type"), where)
    name = architectures[0]
    if not isinstance(name, str) or not name.endswith(("ForTokenClassification", "ForSequenceClassification")):
        return None
    kind = "token" if name.endswith("ForTokenClassification") else "pair" if pairs else "sequence"
    if name != plain_head_class(model_type, kind):
        raise _error(
            where,
            f"its {name} puts layers on [CLS] that zhbert's classifier does not have: open it with transformers' own "
            "pipeline, or fine-tune its encoder with zhbert train (--encoder)",
        )
    id2label = config.get("id2label") or {}
    try:
        labels = [str(id2label[key]) for key in sorted(id2label, key=int)]
    except (TypeError, ValueError):
        raise _error(where, f"id2label {str(id2label)[:80]} is not numbered 0, 1, ...") from None
    if not labels or sorted(map(int, id2label)) != list(range(len(labels))):
        raise _error(where, f"id2label {str(id2label)[:80]} is not numbered 0, 1, ...")
    if kind != "token":
        return HeadConfig(kind=kind, labels=labels)
    prefixes = {label.partition("-")[0] for label in labels if label != "O"}
    if set(labels) <= set("BMES"):
        scheme = "BMES-untyped"
    elif "M" in prefixes:
        scheme = "BMES"
    elif prefixes & {"E", "S"}:
        scheme = "BIOES"  # also B/I/S without E (CLUENER checkpoints): a span then ends at the next O or B
    else:
        scheme = "BIO"
    try:
        for label in labels:
            parse_tag(label, scheme)
    except ValueError as e:
        shown = ", ".join(labels[:8]) + (", ..." if len(labels) > 8 else "")
        why = str(e)
        if labels == [f"LABEL_{i}" for i in range(len(labels))]:  # transformers' names when training gave none
            why = (
                "they are transformers' placeholders, the model was saved without its tags' names: write them in "
                'config.json as id2label, in the order of the training data\'s tag ids ({"0": "O", "1": "B-PER", ...}), '
                "and label2id likewise"
            )
        raise _error(where, f"its labels ({shown}) are no tag scheme zhbert reads: {why}") from None
    return HeadConfig(kind="token", labels=labels, scheme=scheme)


def saved_head_settings(path: str | Path, pairs: bool = False) -> HeadConfig:
    """The head of a saved task folder, zhbert's or a plain transformers classifier's (read as a pair
    classifier with ``pairs``), from its ``config.json`` alone (no weights); a folder that is no task
    model is an error naming it."""
    from ..model_folder import no_config_problem, read_config
    from ..models_registry import POS_MARKER

    path = Path(path)
    if (path / POS_MARKER).is_file():
        raise _error(path, "a part-of-speech head over a segmenter (zhbert.load reads it), not a task model a recipe scores")
    if not (path / "config.json").is_file():
        raise ModelLoadError(no_config_problem(path))
    config = read_config(path)
    if config.get("zhbert_head"):
        try:
            return HeadConfig.from_dict(dict(config["zhbert_head"]))
        except (TypeError, ValueError) as e:
            raise _error(path / "config.json", f"its zhbert_head settings are not a head: {e}") from None
    head = plain_head_settings(config, path / "config.json", pairs)
    if head is None:
        raise _error(path / "config.json", "no 'zhbert_head' settings and no classifier: this is not a task model")
    return head


def load_saved_head(path: str | Path, pairs: bool = False) -> ZhBertForTask:
    """:func:`load_head`, or a plain transformers classifier folder read as zhbert's head (of pairs with ``pairs``)."""
    from ..model_folder import read_config

    if read_config(Path(path)).get("zhbert_head"):
        return load_head(path, pairs)
    return load_plain_head(path, saved_head_settings(path, pairs))


def load_plain_head(path: str | Path, head: HeadConfig) -> ZhBertForTask:
    """A plain transformers classifier folder (:func:`plain_head_settings`) as zhbert's head, in eval mode."""
    return load_folder(ZhBertForTask, path, "zhbert_head", "a zhbert task model", head=head)


def load_head(path: str | Path, pairs: bool = False) -> ZhBertForTask:
    """Load a saved head (any of zhbert's heads) in eval mode. ``pairs``: a classifier of texts read as
    one of ``(text_a, text_b)`` pairs, ``[CLS] a [SEP] b [SEP]``: the same layers (a plain transformers
    sequence classifier trained on pairs, once its settings were written by ``zhbert export``)."""
    head = None
    if pairs:
        from ..model_folder import read_config

        saved = read_config(Path(path)).get("zhbert_head") or {}
        if saved.get("kind") == "sequence":
            head = HeadConfig.from_dict({**saved, "kind": "pair", "window_align": None})
    model = load_folder(ZhBertForTask, path, "zhbert_head", "a zhbert task model", head=head)
    if model.head.lexicon:
        from ..tokenizer import load_tokenizer

        attach_lexicon(model, load_tokenizer(path), path)
    return model


def load_folder(cls, path: str | Path, settings: str, what: str, head: HeadConfig | None = None):
    """A saved ``cls`` model (written on BERT; rebuilt on the folder's encoder type) in eval mode;
    errors name the file: a folder without the ``settings`` entry in its config, or weights that do not load.
    ``head``: the settings of a folder saved without them (a plain transformers classifier)."""
    from ..encoders import on_encoder

    path = _check_folder(path)
    config = read_encoder_config(path)
    if head is not None:
        setattr(config, settings, head.to_dict())
    cls = on_encoder(cls, config.model_type)
    if not getattr(config, settings, None):
        raise _error(path / "config.json", f"no '{settings}' settings: this is not {what}")
    if settings == "zhbert_head":
        try:
            HeadConfig.from_dict(dict(config.zhbert_head))
        except (TypeError, ValueError) as e:
            raise _error(path / "config.json", f"its zhbert_head settings are not a head: {e}") from None
    try:
        model = cls.from_pretrained(str(path), config=config, local_files_only=True, trust_remote_code=False, dtype=torch.float32)
    except Exception as e:  # e.g. a tensor cut short inside the file
        mismatch = _shape_mismatch(cls, config, path / "model.safetensors")
        raise _error(path / "model.safetensors", mismatch or f"cannot load weights ({e})") from None
    return model.eval()


def _shape_mismatch(cls, config, weights: Path) -> str | None:
    """The first tensor whose shape in the file differs from what config.json describes, said with
    the head's labels (transformers' own message points at a report it has not printed)."""
    from safetensors import safe_open

    try:
        with torch.device("meta"):
            expected = {k: tuple(v.shape) for k, v in cls(config).state_dict().items()}
        with safe_open(str(weights), framework="pt") as f:
            stored = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    except Exception:  # noqa: BLE001 - a best-effort explanation; the caller reports the load error itself
        return None
    for key, shape in stored.items():
        prefix = cls.base_model_prefix + "."
        want = expected.get(key) or expected.get(key.removeprefix(prefix)) or expected.get(prefix + key)
        if want is not None and want != shape:
            head = getattr(config, "zhbert_head", None) or {}
            labels = head.get("labels") if isinstance(head, dict) else None
            said = f"; config.json's zhbert_head lists {len(labels)} labels {labels[:8]}" if labels else ""
            return f"{key} is {list(shape)} in the file but {list(want)} for config.json{said}: the two come from different models"
    return None
