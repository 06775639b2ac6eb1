"""Which commands a page quotes, and whether each names a script of the checkout or a `zhbert` command with
options that command takes: the checker the RESULTS, user-page and bench-script tests share."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer

from zhbert.cli import app
from zhbert.data.tasks import DATASETS
from zhbert.options import dataclass_parser
from zhbert.recipes import RECIPES
from zhbert.recipes.arguments import RecipeArguments
from zhbert.training.pretrain import PretrainConfig

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"
STARTS = ("zhbert ", "python bench/", "python recipes/", "python corpora/", "python -m zhbert", "bash bench/")


def shell_blocks(text: str) -> list[str]:
    """The fenced blocks of a page that hold shell commands (```bash, or a bare ``` fence), line by line."""
    blocks, current = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = [] if line.strip() in ("```", "```bash", "```sh") else False
            else:
                if current is not False:
                    blocks.append("\n".join(current) + "\n")
                current = None
        elif current:
            current.append(line)
        elif current == []:
            current = [line]
    return blocks


def quoted_commands(text: str, inline: bool = True) -> list[str]:
    """Command lines in shell blocks and (``inline``) in `inline code`, comments cut, continuation lines joined."""
    lines = []
    for block in shell_blocks(text):
        lines += re.sub(r"\s*\\\n\s*", " ", block).splitlines()
    if inline:
        lines += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    commands = []
    for line in lines:
        line = line.split(" #")[0].strip()
        for part in re.split(r"\s*(?:&&|;|\|)\s*", line):
            if part.startswith(STARTS):
                commands.append(part)
    return commands


def _flags(words: list[str]) -> set[str]:
    """The options named; a quoted value holding spaces (--recipe-flags "--crf --epochs 2") is a value, not one."""
    return {w.split("=")[0].replace("-", "_").lstrip("_") for w in words if w.startswith("--") and not any(c.isspace() for c in w)}


def _dataclass_fields(cls) -> set[str]:
    """The options the command's parser makes of a dataclass (each field, its aliases, --no_FIELD), and --help."""
    parser = dataclass_parser(cls, "zhbert")
    return {s.replace("-", "_").lstrip("_") for a in parser._actions for s in a.option_strings}


def _placeholder(word: str) -> bool:
    """TASK, <name>, ...: a command written as a pattern, not one to run."""
    return word.isupper() or word.startswith("<") or word == "..."


def problems_of(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:  # a quote closed on a later line of a shell script: its words are still the words
        words = command.replace('"', " ").replace("'", " ").split()
    if words[0] in ("python", "bash") and words[1] == "-m":
        module = ROOT / Path(*words[2].split("."))
        return [] if module.with_suffix(".py").is_file() or (module / "__main__.py").is_file() else [f"no module {words[2]}"]
    if words[0] in ("python", "bash"):
        script = ROOT / words[1]
        if not script.is_file():
            return [f"no script {words[1]}"]
        if words[1].startswith("recipes/"):  # a recipe script takes the recipe's arguments
            return [f"{words[1]} has no option --{f}" for f in sorted(_flags(words[2:]) - _dataclass_fields(RecipeArguments))]
        source = script.read_text(encoding="utf-8").replace("-", "_")
        return [f"{words[1]} has no option --{f}" for f in sorted(_flags(words[2:])) if f"__{f}" not in source]
    group = typer.main.get_command(app)
    name, rest = words[1], words[2:]
    if name not in group.commands:
        return [f"no command zhbert {name}"]
    command_obj = group.commands[name]
    if name == "train":
        task = rest[0] if rest else ""
        if _placeholder(task) or task.startswith("-"):
            return []
        if task not in RECIPES:
            return [f"no recipe {task}"]
        dataset = rest[rest.index("--dataset") + 1] if "--dataset" in rest else None
        known = DATASETS.get(task)
        bad = [f"zhbert train {task} has no dataset {dataset}"] if dataset and known and dataset not in known else []
        return bad + [f"zhbert train has no option --{f}" for f in sorted(_flags(rest) - _dataclass_fields(RecipeArguments))]
    if name == "pretrain":
        return [f"zhbert pretrain has no option --{f}" for f in sorted(_flags(rest) - _dataclass_fields(PretrainConfig))]
    if hasattr(command_obj, "commands"):  # a command group: zhbert study ...
        if rest[0] not in command_obj.commands:
            return [f"no command zhbert {name} {rest[0]}"]
        name, command_obj, rest = f"{name} {rest[0]}", command_obj.commands[rest[0]], rest[1:]
    options = {o.replace("-", "_").lstrip("_") for p in command_obj.params for o in p.opts} | {"help"}
    return [f"zhbert {name} has no option --{f}" for f in sorted(_flags(rest) - options)]
