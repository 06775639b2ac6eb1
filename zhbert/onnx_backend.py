"""A task head's encoder as an ONNX graph, written beside the folder's weights and run by ONNX Runtime.

The graph is the head's BERT encoder: token ids, attention mask and segment ids in; the last layer,
the pooled [CLS] vector and, for a head that mixes layers, every layer out. What a head adds around
the encoder (word features from the lexicon, BiLSTM, output layer) is small and stays in torch, and
CRF decoding, user dictionaries and offsets stay in Python, so a folder served from ONNX gives the
answers of the same folder in torch up to float rounding. The layout is sentence-transformers':
``onnx/model.onnx`` (fp32) and ``onnx/model_qint8.onnx`` (int8 weights, dynamic quantisation).

``onnx/zhbert_onnx.json`` records the SHA-256 of the ``model.safetensors`` the graph was made from:
a folder retrained or re-exported after its graph refuses to serve the stale graph.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import warnings
from pathlib import Path

import torch
from torch import nn

from .errors import ModelLoadError, ZhbertError

ONNX_DIR = "onnx"
GRAPHS = {"onnx": "model.onnx", "onnx-int8": "model_qint8.onnx"}  # backend name -> file in ONNX_DIR
RECORD = "zhbert_onnx.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 18
INSTALL = "pip install 'zhbert[onnx]' (onnx, onnxscript and onnxruntime)"


def _require(*modules: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ZhbertError(f"ONNX needs {', '.join(missing)}: {INSTALL}")


def _weights_digest(folder: Path) -> str:
    h = hashlib.sha256()
    with open(folder / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def _quiet():
    """The exporter's and the quantiser's progress lines, notes and advice kept off the user's terminal
    (stdout, Python warnings, the root and torch.onnx loggers); errors still raise."""
    loggers = [logging.getLogger(), logging.getLogger("torch.onnx")]
    levels = [log.level for log in loggers]
    try:
        for log in loggers:
            log.setLevel(logging.ERROR)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for log, level in zip(loggers, levels):
            log.setLevel(level)


class _EncoderGraph(nn.Module):
    """What the ONNX graph computes: the encoder's outputs a head reads, as a tuple of tensors."""

    def __init__(self, bert: nn.Module, all_layers: bool):
        super().__init__()
        self.bert, self.all_layers = bert, all_layers

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, output_hidden_states=self.all_layers
        )
        outputs = [out.last_hidden_state]
        pooled = getattr(out, "pooler_output", None)
        if pooled is not None:
            outputs.append(pooled)
        if self.all_layers:
            outputs.append(torch.stack(out.hidden_states))
        return tuple(outputs)


def _output_names(model) -> list[str]:
    names = ["last_hidden_state"]
    if getattr(model.base_model, "pooler", None) is not None:
        names.append("pooler_output")
    if model.fusion.needs_all_layers:
        names.append("hidden_states")
    return names


def export_onnx(folder: str | Path, int8: bool = False) -> list[Path]:
    """Write ``folder/onnx/model.onnx`` (and with ``int8`` ``model_qint8.onnx``) for the task head saved in
    ``folder``, made from the weights as :func:`zhbert.load` reads them (fp16 files run as fp32)."""
    _require("onnx", "onnxscript", "onnxruntime")
    from .heads.io import load_head

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if not config.get("zhbert_head"):
        raise ModelLoadError(
            f"{folder}: --onnx exports task heads (segmentation, NER, tagging and matching folders); "
            "this folder is not one (a masked-LM encoder, a multi-task model or a POS head runs in torch)"
        )
    model = load_head(folder)
    graph = _EncoderGraph(model.base_model, model.fusion.needs_all_layers).eval()
    sample = torch.tensor([[101, 872, 1962, 102, 0, 0], [101, 872, 1962, 3221, 5023, 102]]) % model.config.vocab_size
    mask, types = (sample != 0).long(), torch.zeros_like(sample)
    batch, length = torch.export.Dim("batch"), torch.export.Dim("sequence", max=model.config.max_position_embeddings)
    out_dir = folder / ONNX_DIR
    out_dir.mkdir(exist_ok=True)
    target = out_dir / GRAPHS["onnx"]
    with _quiet(), torch.no_grad():
        try:
            program = torch.onnx.export(
                graph,
                (sample, mask, types),
                input_names=list(INPUTS),
                output_names=_output_names(model),
                dynamic_shapes=({0: batch, 1: length},) * 3,
                opset_version=OPSET,
                dynamo=True,
                verbose=False,
            )
        except Exception as e:  # the exporter's own errors are many pages long
            raise ZhbertError(f"{folder}: the encoder does not export to ONNX: {str(e).splitlines()[0]}") from e
        program.save(str(target))
    written = [target]
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with _quiet():
            quantize_dynamic(str(target), str(out_dir / GRAPHS["onnx-int8"]), weight_type=QuantType.QInt8)
        written.append(out_dir / GRAPHS["onnx-int8"])
    record = {"weights_sha256": _weights_digest(folder), "opset": OPSET, "outputs": _output_names(model)}
    record["graphs"] = [p.name for p in written]
    (out_dir / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return written


class OnnxEncoder(nn.Module):
    """Stands in for a head's ``bert``: the same call and outputs, computed by ONNX Runtime on the CPU."""

    def __init__(self, graph: Path, output_names: list[str], config, threads: int | None = None):
        super().__init__()
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()  # as torch would (OMP_NUM_THREADS)
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self.output_names, self.config = output_names, config

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False, **_):
        from transformers.modeling_outputs import BaseModelOutputWithPooling

        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        feeds = {n: t.detach().cpu().long().numpy() for n, t in zip(INPUTS, (input_ids, attention_mask, token_type_ids))}
        outs = dict(zip(self.output_names, (torch.from_numpy(a) for a in self.session.run(self.output_names, feeds))))
        hidden = tuple(outs["hidden_states"].unbind(0)) if output_hidden_states and "hidden_states" in outs else None
        return BaseModelOutputWithPooling(
            last_hidden_state=outs["last_hidden_state"], pooler_output=outs.get("pooler_output"), hidden_states=hidden
        )


def serve_from_onnx(model, folder: str | Path, backend: str = "onnx") -> None:
    """Replace ``model``'s torch encoder, in place, by the folder's ONNX graph (``backend``: ``"onnx"`` or
    ``"onnx-int8"``). Refuses a folder without the graph, or whose weights changed after it was made."""
    _require("onnxruntime")
    folder = Path(folder)
    graph, record_file = folder / ONNX_DIR / GRAPHS[backend], folder / ONNX_DIR / RECORD
    if not graph.is_file() or not record_file.is_file():
        flag = "--onnx --int8" if backend == "onnx-int8" else "--onnx"
        raise ModelLoadError(f"{graph}: no such ONNX graph; export the model with it (zhbert export MODEL DIR {flag}) and load DIR")
    record = json.loads(record_file.read_text(encoding="utf-8"))
    if record.get("weights_sha256") != _weights_digest(folder):
        raise ModelLoadError(
            f"{graph}: made from other weights than {folder / 'model.safetensors'} (the folder changed after the export); "
            "export the model again with --onnx"
        )
    setattr(model, model.base_model_prefix, OnnxEncoder(graph, record["outputs"], model.base_model.config))
