"""Layer-wise linear probing: what does each layer of a frozen encoder know?

For every layer ``l = 0..L`` (0 = the embedding output) a linear classifier is
trained on that layer's vectors alone, and its held-out accuracy is the layer's
score for the task. Tasks:

* ``pos``      — People's Daily POS tag of the word each character belongs to;
* ``entity``   — People's Daily ``nr/ns/nt`` entity type of each character (or O);
* ``boundary`` — the character's BMES position in its word (word segmentation);
* ``pair``     — LCQMC paraphrase or not, from the ``[CLS]`` vector of ``[CLS] a [SEP] b [SEP]``.

Besides one probe per layer, a probe over a learned scalar mix of *all* layers
gives the "centre of gravity" of Tenney et al. (2019), "BERT Rediscovers the
Classical NLP Pipeline": ``E_s[l] = sum_l l * s_l`` with ``s = softmax(w)`` the
mixing weights: the layer the task draws on, on average.

Token tasks use People's Daily's held-out sentences (every 25th, never seen in
pretraining): the first part trains the probes, the rest scores them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from .fusion import ScalarMix
from .tokenizer import encode

__all__ = [
    "PROBE_TASKS",
    "ProbeResult",
    "probe_examples",
    "layer_features",
    "train_probe",
    "probe_model",
    "write_report",
    "pca_plot",
    "token_positions",
    "remove_position_means",
]

PROBE_TASKS = ("pos", "entity", "boundary", "pair")


@dataclass
class ProbeResult:
    task: str
    model: str
    accuracy: list[float]  # per layer, 0 = embeddings
    majority: float  # accuracy of always predicting the most frequent training label
    mix_accuracy: float  # probe over the scalar mix of all layers
    mix_weights: list[float]  # softmax(w) of that mix
    centre_of_gravity: float  # sum_l l * s_l
    n_train: int
    n_test: int
    labels: list[str] = field(default_factory=list)


# --- data ---------------------------------------------------------------------------------
def _char_labels(row: dict, task: str) -> list[str]:
    text, labels = row["text"], []
    if task == "entity":
        labels = ["O"] * len(text)
        for e in row["entities"]:
            labels[e["start"] : e["end"]] = [e["type"]] * (e["end"] - e["start"])
        return labels
    for word, pos in zip(row["words"], row["pos"]):
        if task == "pos":
            labels += [pos] * len(word)
        else:  # boundary
            labels += ["S"] if len(word) == 1 else ["B"] + ["M"] * (len(word) - 2) + ["E"]
    return labels


def probe_examples(task: str, n: int) -> list[dict]:
    """``n`` real examples: ``{"text", "labels"}`` per character, or ``{"text_a", "text_b", "label"}``."""
    if task == "pair":
        from .data.tasks import load_task_data

        data = load_task_data("matching", "lcqmc")  # trained on dev, scored on test, as in the recipe
        half = n // 2
        return [dict(r, split="train") for r in data.train[:half]] + [dict(r, split="test") for r in data.test[: n - half]]
    from .data.peoples_daily import read_peoples_daily
    from .data.splits import PD_HELDOUT_EVERY

    pd = read_peoples_daily()
    rows = [pd[i] for i in range(0, len(pd), PD_HELDOUT_EVERY) if len(pd[i]["text"]) >= 8][:n]
    out = []
    for r in rows:
        labels = _char_labels(r, task)
        if len(labels) != len(r["text"]):  # the reader guarantees this; a probe on shifted labels would be silent nonsense
            raise ValueError(f"People's Daily sentence {r['id']}: {len(labels)} labels for {len(r['text'])} characters")
        out.append({"text": r["text"], "labels": labels})
    return out


@torch.inference_mode()
def layer_features(model, tokenizer, examples: list[dict], batch_size: int = 32) -> tuple[torch.Tensor, list]:
    """Stacked hidden states ``(N, L+1, H)``: one row per character (token tasks, each token
    labelled by its first character, read from its window of the encoder's pretraining
    length where it sits farthest from an edge) or per pair (``[CLS]``)."""
    from .encoder_info import trained_length
    from .heads.inputs import pair_batch, window_batch
    from .windows import owners, windows

    bert = model.base_model  # a head's encoder, or the encoder itself
    bert.eval()
    size = trained_length(bert.config)  # never positions the encoder did not train
    device = next(bert.parameters()).device
    tok = tokenizer
    special = (tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)

    def states(batch: dict) -> torch.Tensor:  # (rows, T, L+1, H)
        out = bert(**{k: v.to(device) for k, v in batch.items()}, output_hidden_states=True)
        return torch.stack(out.hidden_states, 2).float().cpu()

    if "text_a" in examples[0]:
        rows = []
        for start in range(0, len(examples), batch_size):
            chunk = examples[start : start + batch_size]
            a, b = encode(tok, [e["text_a"] for e in chunk]), encode(tok, [e["text_b"] for e in chunk])
            batch = pair_batch([(x.ids, y.ids) for x, y in zip(a, b)], *special, max_length=size, truncate=True)
            rows.append(states(batch)[:, 0])
        return torch.cat(rows), [e["label"] for e in examples]

    encs = encode(tok, [e["text"] for e in examples])
    spans = [windows(len(enc), size - 2) for enc in encs]
    jobs = [(i, w) for i, sp in enumerate(spans) for w in range(len(sp))]
    window_states: dict[tuple[int, int], torch.Tensor] = {}
    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start : start + batch_size]
        hidden = states(window_batch([encs[i].ids[slice(*spans[i][w])] for i, w in chunk], *special))
        for r, job in enumerate(chunk):
            window_states[job] = hidden[r]
    rows, labels = [], []
    for i, (e, enc) in enumerate(zip(examples, encs)):
        own = owners(len(enc), spans[i])
        rows += [window_states[(i, own[k])][1 + k - spans[i][own[k]][0]] for k in range(len(enc))]
        labels += [e["labels"][s] for s, _ in enc.offsets]
    return torch.stack(rows), labels


# --- probes -------------------------------------------------------------------------------
def _fit(module: nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int, l2: float = 1e-4) -> None:
    """Full-batch L-BFGS on cross-entropy + L2: a plain, deterministic multinomial
    logistic regression (no learning rate or epoch count to tune per layer)."""
    opt = torch.optim.LBFGS(module.parameters(), max_iter=steps, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(module(x), y) + l2 * sum((p**2).sum() for p in module.parameters())
        loss.backward()
        return loss

    opt.step(closure)


class _MixProbe(nn.Module):
    def __init__(self, layers: int, hidden: int, classes: int):
        super().__init__()
        self.mix = ScalarMix(layers)
        self.linear = nn.Linear(hidden, classes)

    def forward(self, x):  # x: (N, L+1, H)
        return self.linear(self.mix(list(x.unbind(1))))


def train_probe(train_x, train_y, test_x, test_y, classes: int, steps: int = 200, seed: int = 0) -> tuple[list[float], float, list[float]]:
    """Per-layer accuracies, then the scalar-mix probe's accuracy and weights."""
    torch.manual_seed(seed)
    # standardise each layer with training statistics: layers differ in scale by orders of magnitude
    mean, std = train_x.mean(0, keepdim=True), train_x.std(0, keepdim=True) + 1e-5
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    accs = []
    for layer in range(train_x.size(1)):
        probe = nn.Linear(train_x.size(2), classes)
        _fit(probe, train_x[:, layer], train_y, steps)
        with torch.no_grad():
            accs.append(float((probe(test_x[:, layer]).argmax(-1) == test_y).float().mean()))
    mix = _MixProbe(train_x.size(1), train_x.size(2), classes)
    _fit(mix, train_x, train_y, steps)
    with torch.no_grad():
        mix_acc = float((mix(test_x).argmax(-1) == test_y).float().mean())
        weights = mix.mix.layer_weights().tolist()
    return accs, mix_acc, weights


def centre_of_gravity(weights: list[float]) -> float:
    return float(sum(layer * w for layer, w in enumerate(weights)))


def probe_model(
    model,
    tokenizer,
    name: str,
    tasks=PROBE_TASKS,
    sentences: int = 1200,
    pairs: int = 2000,
    train_share: float = 0.7,
    steps: int = 200,
    seed: int = 0,
) -> list[ProbeResult]:
    results = []
    for task in tasks:
        examples = probe_examples(task, pairs if task == "pair" else sentences)
        if task == "pair":
            train = [e for e in examples if e["split"] == "train"]
            test = [e for e in examples if e["split"] == "test"]
        else:  # split by sentence, not by character: no sentence is in both
            cut = max(1, int(len(examples) * train_share))
            train, test = examples[:cut], examples[cut:]
        tx, ty = layer_features(model, tokenizer, train)
        vx, vy = layer_features(model, tokenizer, test)
        labels = sorted(set(map(str, ty)))
        index = {l: i for i, l in enumerate(labels)}
        ty_t = torch.tensor([index[str(l)] for l in ty])
        vy_t = torch.tensor([index.get(str(l), -1) for l in vy])  # a label never seen in training counts as an error
        accs, mix_acc, weights = train_probe(tx, ty_t, vx, vy_t, len(labels), steps, seed)
        majority = float((vy_t == torch.bincount(ty_t).argmax()).float().mean())
        results.append(ProbeResult(task, name, accs, majority, mix_acc, weights, centre_of_gravity(weights), len(ty), len(vy), labels))
    return results


# --- report -------------------------------------------------------------------------------
def write_report(results: list[ProbeResult], output: str | Path, title: str = "Layer-wise probes") -> dict[str, Path]:
    """``probe.json``, ``probe.md`` (table) and ``probe_layers.png`` (accuracy per layer)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "probe.json").write_text(json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=1), encoding="utf-8")
    layers = len(results[0].accuracy)
    head = "| task | model | majority | " + " | ".join(["emb"] + [f"L{l}" for l in range(1, layers)]) + " | mix | centre of gravity |"
    lines = [head, "|" + "---|" * (layers + 5)]
    for r in results:
        cells = " | ".join(f"{a * 100:.1f}" for a in r.accuracy)
        lines.append(
            f"| {r.task} | {r.model} | {r.majority * 100:.1f} | {cells} | {r.mix_accuracy * 100:.1f} | {r.centre_of_gravity:.2f} |"
        )
    (out / "probe.md").write_text("\n".join(lines) + "\n", encoding="utf-8")

    tasks = list(dict.fromkeys(r.task for r in results))
    models = list(dict.fromkeys(r.model for r in results))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ti, task in enumerate(tasks):
        for mi, model in enumerate(models):
            r = next((r for r in results if r.task == task and r.model == model), None)
            if r is None:
                continue
            ax.plot(
                range(layers),
                [a * 100 for a in r.accuracy],
                color=colours[ti % len(colours)],
                linestyle=["-", "--", ":", "-."][mi % 4],
                marker="o",
                label=f"{task} ({model}; centre {r.centre_of_gravity:.1f})",
            )
    ax.set_xticks(range(layers), ["emb"] + [str(l) for l in range(1, layers)])
    ax.set_xlabel("layer (0 = embedding output)")
    ax.set_ylabel("probe accuracy on held-out data (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out / "probe_layers.png", dpi=120)
    plt.close(fig)
    return {"json": out / "probe.json", "table": out / "probe.md", "plot": out / "probe_layers.png"}


def random_twin(model, seed: int = 0):
    """A randomly initialised model of the same configuration ("what did pretraining add")."""
    from .encoders import build_encoder

    torch.manual_seed(seed)
    return build_encoder(model.base_model.config).eval()


def token_positions(tokenizer, examples: list[dict], max_len: int) -> torch.Tensor:
    """Each token row of :func:`layer_features` -> its position in the window it is read from
    (windows of ``max_len`` tokens with [CLS]/[SEP], as there; 0 = the first token)."""
    from .windows import owners, windows

    out: list[int] = []
    for enc in encode(tokenizer, [e["text"] for e in examples]):
        spans = windows(len(enc), max_len - 2)
        own = owners(len(enc), spans)
        out += [k - spans[own[k]][0] for k in range(len(enc))]
    return torch.tensor(out)


def remove_position_means(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Subtract from every row the mean of all rows at the same position."""
    size = int(positions.max()) + 1
    counts = torch.bincount(positions, minlength=size).clamp(min=1).to(x.dtype)
    means = torch.zeros(size, x.shape[1], dtype=x.dtype).index_add_(0, positions, x) / counts[:, None]
    return x - means[positions]


def pca_plot(model, tokenizer, output: str | Path, layer: int, sentences: int = 300, top: int = 6, remove_position: bool = True) -> Path:
    """2-D PCA of one layer's character vectors, coloured by the ``top`` most frequent POS tags.

    With ``remove_position`` the mean vector of each token position is subtracted first: the
    largest principal components of a layer are mostly its position code (token position
    explained 99.5% of the 2-D projection at layer 2 of zhbert's default encoder), which
    would otherwise hide everything else. Positions seen fewer than 5 times are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    examples = probe_examples("pos", sentences)
    from .encoder_info import trained_length

    feats, labels = layer_features(model, tokenizer, examples)
    x = feats[:, layer]
    sel = torch.ones(len(labels), dtype=torch.bool)
    if remove_position:
        positions = token_positions(tokenizer, examples, trained_length(model.base_model.config))
        x = remove_position_means(x, positions)
        sel = torch.bincount(positions)[positions] >= 5
    counts: dict[str, int] = {}
    for l in labels:
        counts[l] = counts.get(l, 0) + 1
    keep = sorted(counts, key=counts.get, reverse=True)[:top]
    sel &= torch.tensor([l in keep for l in labels])
    x = x[sel] - x[sel].mean(0)
    _, _, v = torch.pca_lowrank(x, q=2, center=False)
    xy = x @ v[:, :2]
    kept = [l for l, k in zip(labels, sel.tolist()) if k]
    fig, ax = plt.subplots(figsize=(6, 5))
    for tag in keep:
        m = torch.tensor([l == tag for l in kept])
        ax.scatter(xy[m, 0], xy[m, 1], s=4, alpha=0.5, label=f"{tag} ({counts[tag]})")
    ax.set_xlabel("principal component 1")
    ax.set_ylabel("principal component 2")
    ax.set_title(
        f"layer {layer} character vectors{' (position means removed)' if remove_position else ''},\ncoloured by People's Daily POS",
        fontsize=10,
    )
    ax.legend(markerscale=3, fontsize=8)
    fig.tight_layout()
    path = Path(output) / f"pca_layer{layer}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
