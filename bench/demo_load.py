"""Is the demo fair under load? Normal clients' latency with and without one client that sends the
worst requests the demo allows.

    python bench/demo_load.py                 # about 2 minutes on 2 cores, the bundled models
    python bench/demo_load.py --seconds 60    # longer phases

The demo runs in this process (the bundled models, as ``make demo`` serves them). Eight normal
clients (``gradio_client``, one thread each) loop over ordinary requests: a People's Daily sentence
segmented and tagged for entities, a Weibo post classified, one ``[MASK]`` filled. Phase 1 measures
them alone; phase 2 adds one client that sends, back to back, the worst fill-mask request the demo
accepts: 5,000 characters with 20 masks in one window, which must be filled one at a time. Issue 38's
target: the normal clients' p95 in phase 2 at most 2x their p95 in phase 1.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

NORMAL = [
    ("/segment", ("国务院总理李鹏在人民大会堂会见了日本首相桥本龙太郎。", "")),
    ("/ner", ("江泽民主席在北京会见了克林顿总统。", "")),
    ("/tagging", ("今天终于考完试了，开心到飞起😀",)),
    ("/fill_mask", ("中国的首都是北[MASK]。",)),
]


def worst_fill_mask(max_chars: int, max_masks: int) -> str:
    """``max_chars`` characters with ``max_masks`` masks close together (one window re-read per fill)."""
    head = "北京大学[MASK]" * max_masks
    body = ("中共中央总书记、国家主席江泽民发表了新年讲话。" * 300)[: max_chars - len(head)]
    return head + body


def _client(url: str, stop: threading.Event, requests, latencies: list[float], errors: list[str]) -> None:
    from gradio_client import Client

    client = Client(url, verbose=False)
    k = 0
    while not stop.is_set():
        api, args = requests[k % len(requests)]
        k += 1
        start = time.perf_counter()
        try:
            client.predict(*args, api_name=api)
        except Exception as e:  # noqa: BLE001 - counted and reported, a refused request is a result too
            errors.append(f"{api}: {e}")
            continue
        latencies.append(time.perf_counter() - start)


def phase(url: str, seconds: float, clients: int, adversary: str | None) -> tuple[list[float], list[float], list[str]]:
    """Run ``clients`` normal clients (and the adversary, if given) for ``seconds``; their latencies."""
    stop = threading.Event()
    normal, slow, errors = [], [], []
    threads = [
        threading.Thread(target=_client, args=(url, stop, NORMAL[k % len(NORMAL) :] + NORMAL[: k % len(NORMAL)], normal, errors))
        for k in range(clients)
    ]
    if adversary:
        threads.append(threading.Thread(target=_client, args=(url, stop, [("/fill_mask", (adversary,))], slow, errors)))
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return normal, slow, errors


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=45.0, help="length of each phase")
    ap.add_argument("--clients", type=int, default=8, help="normal clients")
    args = ap.parse_args()

    import zhbert.demo as module

    demo = module.build_demo()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None)
    try:
        worst = worst_fill_mask(module.MAX_CHARS, module.MAX_MASKS)
        phase(demo.local_url, 5, args.clients, None)  # warm-up: first calls load and compile nothing, but fill caches
        alone, _, err1 = phase(demo.local_url, args.seconds, args.clients, None)
        loaded, slow, err2 = phase(demo.local_url, args.seconds, args.clients, worst)
    finally:
        demo.close()
    print(f"{args.clients} normal clients, {args.seconds:.0f} s per phase; worst request: {len(worst):,} characters, "
          f"{worst.count('[MASK]')} masks")  # fmt: skip
    print()
    print("| phase | normal requests | p50 ms | p95 ms | worst-case requests | their p50 ms | errors |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| normal clients alone | {len(alone)} | {1000 * statistics.median(alone):.0f} | {1000 * p95(alone):.0f} | – | – | {len(err1)} |"
    )  # noqa: E501
    print(
        f"| with one worst-case client | {len(loaded)} | {1000 * statistics.median(loaded):.0f} | {1000 * p95(loaded):.0f} "
        f"| {len(slow)} | {1000 * statistics.median(slow) if slow else float('nan'):.0f} | {len(err2)} |"
    )
    ratio = p95(loaded) / p95(alone)
    print()
    print(f"p95 ratio: {ratio:.2f}x (target <= 2x: {'met' if ratio <= 2 else 'missed'})")
    for e in (err1 + err2)[:5]:
        print("error:", e)


if __name__ == "__main__":
    main()
