"""Write all-MiniLM-L6-v2 as an ONNX graph straight from its safetensors weights (no torch).

The graph is the sentence-transformers pipeline after tokenisation, op for op what BERT's
PyTorch code computes: token + position + segment embeddings, LayerNorm, six encoder layers
(12-head self-attention with the padding mask, GELU feed-forward, residual LayerNorms), then
mean pooling over the attention mask and L2 normalisation. Inputs ``input_ids``,
``attention_mask``, ``token_type_ids`` (int64, batch x sequence); output ``embedding``
(float32, batch x 384).

Why by hand: exporting through ``torch.onnx`` needs torch and its CUDA wheels (~4 GB of
downloads) at set-up, for a graph of ~20 standard ONNX ops per layer. The ``onnx`` package's
helpers write it from the weights in a few seconds, and ``retrieval.minilm_export`` checks the
result against vectors sentence-transformers made (``minilm_reference.json``) before it is used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is a single op from 17 on
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "embedding"


@dataclass(frozen=True)
class BertShape:
    """The few numbers of the model's ``config.json`` the graph depends on."""

    hidden: int
    heads: int
    layers: int
    eps: float

    @classmethod
    def from_config(cls, path: Path) -> BertShape:
        """Read ``config.json``; refuse a model this builder does not describe."""
        config = json.loads(path.read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"{path}: not a BERT model with erf GELU; cannot build its graph")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path}: only absolute position embeddings are supported")
        return cls(
            hidden=int(config["hidden_size"]),
            heads=int(config["num_attention_heads"]),
            layers=int(config["num_hidden_layers"]),
            eps=float(config["layer_norm_eps"]),
        )


@dataclass
class _Builder:
    """Collects nodes and initializers; every helper returns the name of its output."""

    weights: dict[str, np.ndarray]
    nodes: list[Any] = field(default_factory=list)
    inits: list[Any] = field(default_factory=list)
    _count: int = 0

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        value = self.weights[key].astype(np.float32)
        return self.const(key.replace(".", "_"), value.T if transpose else value)

    def op(self, op_type: str, inputs: list[str], hint: str = "", **attrs: Any) -> str:
        from onnx import helper

        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def linear(self, x: str, prefix: str) -> str:
        """``x @ W.T + b`` for a torch ``nn.Linear`` stored as ``prefix.weight``/``prefix.bias``."""
        product = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [product, self.weight(f"{prefix}.bias")])

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def _embeddings(b: _Builder, shape: BertShape) -> str:
    """Word + absolute position + segment embeddings, then LayerNorm."""
    words = b.op("Gather", [b.weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    # The first ``sequence`` rows of the position table (Shape with start/end is 1-D [sequence]).
    seq_len = b.op("Shape", ["input_ids"], start=1, end=2)
    zero, axis = (b.const(h, np.array([0], dtype=np.int64)) for h in ("start", "axis_0"))
    table = b.weight("embeddings.position_embeddings.weight")
    pos = b.op("Slice", [table, zero, seq_len, axis])
    types = b.op(
        "Gather", [b.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0
    )
    summed = b.op("Add", [b.op("Add", [words, pos]), types])
    return b.layer_norm(summed, "embeddings.LayerNorm", shape.eps)


def _mask_bias(b: _Builder, mask: str) -> str:
    """Padding mask as an additive bias of shape (batch, 1, 1, sequence), as BERT builds it.

    Kept positions add 0, padded ones the lowest float32 (torch's ``finfo.min``)."""
    inverted = b.op("Sub", [b.const("one_f", np.array(1.0, dtype=np.float32)), mask])
    lowest = b.const("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32))
    bias = b.op("Mul", [inverted, lowest])
    return b.op("Unsqueeze", [bias, b.const("axes_1_2", np.array([1, 2], dtype=np.int64))])


def _attention(b: _Builder, x: str, bias: str, prefix: str, shape: BertShape) -> str:
    """Multi-head self-attention of one layer, before its output projection."""
    head_dim = shape.hidden // shape.heads
    split = b.const("split_heads", np.array([0, 0, shape.heads, head_dim], dtype=np.int64))

    def heads(kind: str, perm: list[int]) -> str:
        projected = b.linear(x, f"{prefix}.attention.self.{kind}")
        return b.op("Transpose", [b.op("Reshape", [projected, split])], perm=perm)

    query = heads("query", [0, 2, 1, 3])
    key = heads("key", [0, 2, 3, 1])  # already transposed for query @ key
    value = heads("value", [0, 2, 1, 3])
    scores = b.op("MatMul", [query, key])
    scale = b.const("scale", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    scores = b.op("Add", [b.op("Mul", [scores, scale]), bias])
    context = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), value])
    merge = b.const("merge_heads", np.array([0, 0, shape.hidden], dtype=np.int64))
    return b.op("Reshape", [b.op("Transpose", [context], perm=[0, 2, 1, 3]), merge])


def _gelu(b: _Builder, x: str) -> str:
    """Exact GELU, ``0.5 * x * (1 + erf(x / sqrt(2)))`` (BERT's ``gelu``)."""
    scaled = b.op("Div", [x, b.const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))])
    one = b.const("one_f", np.array(1.0, dtype=np.float32))
    half = b.const("half", np.array(0.5, dtype=np.float32))
    return b.op("Mul", [b.op("Mul", [x, half]), b.op("Add", [b.op("Erf", [scaled]), one])])


def _layer(b: _Builder, x: str, bias: str, index: int, shape: BertShape) -> str:
    """One encoder layer: attention + residual LayerNorm, feed-forward + residual LayerNorm."""
    prefix = f"encoder.layer.{index}"
    attended = b.linear(_attention(b, x, bias, prefix, shape), f"{prefix}.attention.output.dense")
    x = b.layer_norm(b.op("Add", [attended, x]), f"{prefix}.attention.output.LayerNorm", shape.eps)
    inner = _gelu(b, b.linear(x, f"{prefix}.intermediate.dense"))
    out = b.linear(inner, f"{prefix}.output.dense")
    return b.layer_norm(b.op("Add", [out, x]), f"{prefix}.output.LayerNorm", shape.eps)


def _pool_and_normalise(b: _Builder, hidden: str, mask: str) -> str:
    """Mean over unmasked tokens (count clamped at 1e-9), then divide by max(L2 norm, 1e-12)."""
    axis = b.const("axis_1", np.array([1], dtype=np.int64))
    weights = b.op("Unsqueeze", [mask, b.const("axis_2", np.array([2], dtype=np.int64))])
    summed = b.op("ReduceSum", [b.op("Mul", [hidden, weights]), axis], keepdims=0)
    count = b.op("ReduceSum", [weights, axis], keepdims=0)
    floor = b.const("count_floor", np.array(1e-9, dtype=np.float32))
    mean = b.op("Div", [summed, b.op("Max", [count, floor])])
    square = b.op("ReduceSum", [b.op("Mul", [mean, mean]), axis], keepdims=1)
    norm = b.op("Max", [b.op("Sqrt", [square]), b.const("eps", np.array(1e-12, np.float32))])
    return b.op("Div", [mean, norm], hint=OUTPUT_NAME)


def build_model(weights_dir: Path) -> Any:
    """The checked ONNX ``ModelProto`` of the model in ``weights_dir`` (safetensors + config)."""
    import onnx
    from onnx import TensorProto, helper
    from safetensors.numpy import load_file

    shape = BertShape.from_config(weights_dir / "config.json")
    b = _Builder(load_file(str(weights_dir / "model.safetensors")))
    mask = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    hidden = _embeddings(b, shape)
    bias = _mask_bias(b, mask)
    for index in range(shape.layers):
        hidden = _layer(b, hidden, bias, index, shape)
    embedding = _pool_and_normalise(b, hidden, mask)
    b.nodes.append(helper.make_node("Identity", [embedding], [OUTPUT_NAME]))
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in INPUT_NAMES
    ]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", shape.hidden])
    graph = helper.make_graph(b.nodes, "all-MiniLM-L6-v2", inputs, [output], b.inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="sheriff-claw"
    )
    model.ir_version = 8  # readable by every onnxruntime that supports opset 17
    onnx.checker.check_model(model)
    return model


def write_graph(weights_dir: Path, target: Path) -> None:
    """Build the graph and write it to ``target`` (one file; weights inline, ~90 MB)."""
    import onnx

    onnx.save_model(build_model(weights_dir), str(target))
