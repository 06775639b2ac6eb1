"""Paraphrase judgement from sentence embeddings alone: unsupervised SimCSE (Gao et al., EMNLP 2021) on
the raw corpora, scored across sources as bench/matching_transfer.py scores the cross-encoders.

Each training step encodes a batch of corpus sentences twice under different dropout masks; a sentence's
second encoding is its positive and the batch's other sentences its negatives (cross-entropy over cosine
similarities / temperature). No labelled pair is read in training. A pair is then called a paraphrase when
the cosine of its two [CLS] vectors is above a threshold chosen on the transfer dev set (AFQMC's dev and
PAWS-X's held-out 10%), and scored on LCQMC's and BQ's whole dev sets, as the heads in
bench/matching_transfer.py are; `--steps 0` scores the encoder as it is.

    python bench/simcse_probe.py --encoder electra --steps 0 --output runs/simcse/electra-0
    python bench/simcse_probe.py --encoder electra --steps 500 --output runs/simcse/electra-500
    python bench/simcse_probe.py --encoder electra --steps 3 --batch-size 8 --eval-samples 64 --output /tmp/simcse  # a quick look

Dev sets only; no test split is read.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from matching_transfer import EVERYDAY  # noqa: E402  (the same four everyday pairs)


def corpus_sentences(n: int, seed: int, min_chars: int = 8, max_chars: int = 64) -> list[str]:
    """``n`` corpus sentences, every source in its pretraining share, shuffled; none from a dev/test split."""
    from zhbert.data.corpus_sample import mixed_sentences

    pool = list(mixed_sentences(n * 40, min_chars=min_chars, max_chars=max_chars))  # about 40 characters a sentence
    random.Random(seed).shuffle(pool)
    return pool[:n]


def embed(model, tokenizer, texts: list[str], max_length: int, batch_size: int = 128):
    """The [CLS] vectors of ``texts``, L2-normalised, in eval mode."""
    import torch

    out = []
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(texts), batch_size):
            enc = tokenizer(texts[i : i + batch_size], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            out.append(torch.nn.functional.normalize(model(**enc).last_hidden_state[:, 0], dim=-1))
    return torch.cat(out)


def pair_cosines(model, tokenizer, rows: list[dict], max_length: int) -> list[float]:
    texts = sorted({t for r in rows for t in (r["text_a"], r["text_b"])})
    vectors = embed(model, tokenizer, texts, max_length)
    at = {t: i for i, t in enumerate(texts)}
    a = vectors[[at[r["text_a"]] for r in rows]]
    b = vectors[[at[r["text_b"]] for r in rows]]
    return (a * b).sum(-1).tolist()


def best_threshold(cosines: list[float], labels: list[int]) -> tuple[float, float]:
    """The threshold (midway between two neighbouring cosines) of highest accuracy, and that accuracy;
    a pair above it is called a paraphrase."""
    order = sorted(zip(cosines, labels))
    right = sum(labels)  # a threshold under every pair: all called paraphrases, the positives right
    best_right, best = right, order[0][0] - 1e-6
    for k, (cos, label) in enumerate(order):
        right += 1 if label == 0 else -1  # the threshold moved above this pair: now called different
        threshold = (cos + order[k + 1][0]) / 2 if k + 1 < len(order) else cos + 1e-6
        if right > best_right:
            best_right, best = right, threshold
    return best, best_right / len(labels)


def accuracy(cosines: list[float], labels: list[int], threshold: float) -> float:
    return sum((c > threshold) == bool(y) for c, y in zip(cosines, labels)) / len(labels)


def train_simcse(model, tokenizer, sentences: list[str], args) -> list[float]:
    """Unsupervised SimCSE steps; returns the loss at each step."""
    import torch

    torch.manual_seed(args.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.0)
    warmup = max(1, args.steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (args.steps - s) / max(1, args.steps - warmup)))
    )
    model.train()
    losses, start = [], time.time()
    for step in range(args.steps):
        batch = [sentences[(step * args.batch_size + i) % len(sentences)] for i in range(args.batch_size)]
        enc = tokenizer(batch, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")
        first = model(**enc).last_hidden_state[:, 0]
        second = model(**enc).last_hidden_state[:, 0]  # the same sentences under another dropout mask
        sims = torch.nn.functional.cosine_similarity(first.unsqueeze(1), second.unsqueeze(0), dim=-1) / args.temperature
        loss = torch.nn.functional.cross_entropy(sims, torch.arange(len(batch)))
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        if (step + 1) % 50 == 0:
            recent = sum(losses[-50:]) / 50
            print(f"step {step + 1}/{args.steps} loss {recent:.4f} ({time.time() - start:.0f} s)", flush=True)
    return losses


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoder", required=True, help="a bundled encoder name or a folder")
    ap.add_argument("--output", required=True)
    ap.add_argument("--steps", type=int, default=1000, help="SimCSE steps (0: the encoder as it is)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--learning-rate", type=float, default=3e-5)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--max-length", type=int, default=64, help="tokens a sentence is cut to, in training and scoring")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-samples", type=int, default=None, help="score only the first N pairs of each set (a quick look)")
    args = ap.parse_args(argv)

    from transformers import AutoModel

    from zhbert.data.tasks import load_task_data
    from zhbert.models_registry import resolve_model_path
    from zhbert.tokenizer import load_tokenizer

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    folder = resolve_model_path(args.encoder)
    model, tokenizer = AutoModel.from_pretrained(folder), load_tokenizer(folder)
    losses = []
    if args.steps:
        sentences = corpus_sentences(args.steps * args.batch_size, args.seed)
        losses = train_simcse(model, tokenizer, sentences, args)

    n = args.eval_samples
    transfer, bq = load_task_data("matching", "transfer-lcqmc"), load_task_data("matching", "transfer-bq")
    dev = transfer.dev[:n]
    threshold, dev_acc = best_threshold(pair_cosines(model, tokenizer, dev, args.max_length), [r["label"] for r in dev])
    record = {"encoder": args.encoder, "steps": args.steps, "threshold": threshold, "transfer_dev": 100 * dev_acc}
    for name, rows in (("lcqmc", transfer.test[:n]), ("bq", bq.test[:n])):
        cos, labels = pair_cosines(model, tokenizer, rows, args.max_length), [r["label"] for r in rows]
        record[name] = 100 * accuracy(cos, labels, threshold)
        record[f"{name}_own_best"] = 100 * best_threshold(cos, labels)[1]  # what its own best threshold would give: decides nothing
    everyday = pair_cosines(model, tokenizer, [{"text_a": a, "text_b": b} for (a, b), _ in EVERYDAY], args.max_length)
    record["everyday"] = [(a, b, round(c, 4), c > threshold) for ((a, b), _), c in zip(EVERYDAY, everyday)]
    record["everyday_right"] = sum((c > threshold) == same for (_, same), c in zip(EVERYDAY, everyday))
    if losses:
        record["loss_first_last_50"] = [sum(losses[:50]) / min(50, len(losses)), sum(losses[-50:]) / min(50, len(losses))]
    (out / "simcse.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"{args.encoder}, {args.steps} SimCSE steps: threshold {threshold:.3f} (transfer dev {100 * dev_acc:.2f}); "
        f"LCQMC dev {record['lcqmc']:.2f}, BQ dev {record['bq']:.2f}, everyday {record['everyday_right']} / {len(EVERYDAY)}"
    )


if __name__ == "__main__":
    main()
