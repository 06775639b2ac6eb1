"""Pretraining commands: pretrain, prepare-corpus."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .app import _fail, app


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
def pretrain(ctx: typer.Context) -> None:
    """Pretraining: masked LM (every masking strategy, optional NSP or SOP) or ELECTRA's replaced-token detection; rerun to resume.
    `zhbert pretrain --help` lists the options."""
    from ..errors import DataFormatError, Interrupted, ZhbertError
    from ..options import dataclass_parser, parse_into
    from ..training.pretrain import PretrainConfig
    from ..training.pretrain import pretrain as run

    parser = dataclass_parser(PretrainConfig, "zhbert pretrain", "Pretraining (masked LM or ELECTRA); rerun the same command to resume.")
    try:
        cfg = parse_into(parser, list(ctx.args))
    except ValueError as e:  # PretrainConfig's own checks (e.g. --nsp with --sop)
        _fail(str(e), code=2)
    if not cfg.corpus:
        _fail("--corpus is required (text files or folders, or one *.zhcorpus file)", code=2)
    try:
        final = run(cfg)
    except Interrupted as e:
        typer.echo(err=True)
        _fail(str(e), code=e.exit_code)  # the shell's status for the signal: 130 for Ctrl-C, 143 for SIGTERM
    except (DataFormatError, FileNotFoundError, ValueError, ZhbertError) as e:
        typer.echo(err=True)  # end a progress bar's line, so that the error starts a line of its own
        _fail(str(e))
    typer.echo(f"saved {final}")


@app.command("prepare-corpus")
def prepare_corpus(
    corpus: List[Path] = typer.Option(
        ..., "--corpus", help="text files or folders (*.txt, *.jsonl, *.json, *.parquet), one document per line, JSON lines or Parquet"
    ),
    output: Path = typer.Option(..., "--output", "-o", help="the portable file to write (*.zhcorpus)"),
    masking: str = typer.Option("wwm", help="the masking strategy it is for: the file holds the units that strategy needs"),
    tokenizer_from: Optional[Path] = typer.Option(None, "--tokenizer-from", help="use this checkpoint's vocabulary (default: zhbert's)"),
    num_proc: int = typer.Option(2, help="processes for word-boundary preprocessing"),
    max_docs: Optional[int] = typer.Option(None, help="use only the first N documents"),
    doc_format: str = typer.Option(
        "auto",
        help="line, blank-line, jsonl, csv (a header row), parquet or arrow (a save_to_disk folder); "
        "auto: by extension (and by folder), line otherwise",
    ),
    text_key: str = typer.Option(
        "auto",
        help="jsonl, csv and parquet: the key (column) of each record's text "
        "(auto: text, else content, else review; title,content for both)",
    ),
    user_dict: Optional[Path] = typer.Option(None, help="jieba user dictionary for word/entity units"),
) -> None:
    """Tokenise + segment a corpus once into a compact file that `zhbert pretrain --corpus` reads (e.g. on a GPU machine)."""
    from ..errors import DataFormatError
    from ..training.pretrain import prepare_corpus as run

    try:
        meta = run(
            [str(c) for c in corpus],
            str(output),
            masking=masking,
            tokenizer_from=str(tokenizer_from) if tokenizer_from else None,
            num_proc=num_proc,
            doc_format=doc_format,
            user_dict=str(user_dict) if user_dict else None,
            max_docs=max_docs,
            text_key=text_key,
        )
    except (DataFormatError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    typer.echo(
        f"wrote {output}: {meta['documents']:,} documents, {meta['tokens']:,} tokens, units {', '.join(meta['units'])}, "
        f"{output.stat().st_size / 1e6:.1f} MB"
    )
