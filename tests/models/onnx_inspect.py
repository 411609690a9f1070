"""Reading exported ONNX graphs back: summaries, shape-inference statistics and the
mapping from ONNX parameter inputs back to PyTorch parameters.

Used to fill the manifest's descriptive fields (node_count, op_types, param_names,
param_map); the FLOP hand counts never come from here (see flops.py).
"""
from collections import OrderedDict

import numpy as np
import onnx
import onnx.numpy_helper
import torch


def dims_of(value_info):
    """[int | str | None] per dim; None if the dim is unknown; None for the whole
    list if the value has no shape."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def identity_aliases(graph):
    """{output name: graph input name} for Identity nodes that alias a graph input."""
    inputs = {i.name for i in graph.input}
    return OrderedDict((n.output[0], n.input[0]) for n in graph.node
                       if n.op_type == "Identity" and n.input[0] in inputs)


def _classify_outputs(model, stats_model):
    known = {v.name: v for v in list(stats_model.graph.value_info) + list(stats_model.graph.output)
             + list(stats_model.graph.input)}
    stats = {"values": 0, "static": 0, "symbolic": 0, "unknown": 0}
    for node in model.graph.node:
        for name in node.output:
            if not name:
                continue
            stats["values"] += 1
            dims = dims_of(known[name]) if name in known else None
            if dims is None or any(d is None or str(d).startswith("unk__") for d in dims):
                stats["unknown"] += 1  # unk__N: a symbol ONNX invents for a dim it cannot infer
            elif all(isinstance(d, int) for d in dims):
                stats["static"] += 1
            else:
                stats["symbolic"] += 1
    return stats


def shape_stats(model):
    """Classifies every node output as static / symbolic / unknown after ONNX's own
    shape inference (graph value_info removed first), once plain and once with
    data_prop=True (which propagates Shape->Gather->Concat values into Reshape etc.).
    Also records how many value_info entries the exporter itself wrote."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    plain = _classify_outputs(m, onnx.shape_inference.infer_shapes(m))
    prop = _classify_outputs(m, onnx.shape_inference.infer_shapes(m, data_prop=True))
    return dict(plain, unknown_with_data_prop=prop["unknown"],
                exporter_value_info=len(model.graph.value_info))


def summarize(model, skip_constants=True):
    """Markdown-friendly text: inputs with shapes, then one line per node. Small
    Constant nodes are not listed; their values are written in place, e.g. =[0, 32]."""
    g = model.graph
    consts = {}
    for n in g.node:
        if n.op_type == "Constant" and skip_constants:
            arr = onnx.numpy_helper.to_array(n.attribute[0].t)
            consts[n.output[0]] = "=" + (str(arr.tolist()) if arr.size <= 8 else f"<{list(arr.shape)}>")
    lines = ["inputs:"]
    for i in g.input:
        lines.append(f"  {i.name} {dims_of(i)}")
    lines.append("initializers: " + (", ".join(f"{t.name}{list(t.dims)}" for t in g.initializer) or "none"))
    lines.append("nodes:")
    for n in g.node:
        if n.output[0] in consts:
            continue
        attrs = []
        for a in n.attribute:
            v = onnx.helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            if not isinstance(v, onnx.TensorProto):
                attrs.append(f"{a.name}={v}")
        attr_text = (" {" + ", ".join(attrs) + "}") if attrs else ""
        ins = ", ".join(consts.get(i, i) for i in n.input)
        lines.append(f"  {n.op_type}({ins}) -> {', '.join(n.output)}{attr_text}")
    lines.append("outputs: " + ", ".join(f"{o.name} {dims_of(o)}" for o in g.output))
    return "\n".join(lines)


# ------------------------------------------------------------ parameter mapping
def _lstm_reorder(w, hidden):
    """PyTorch gate blocks (i, f, g, o) -> ONNX (i, o, f, c)."""
    h = hidden
    return np.concatenate([w[0:h], w[3 * h:4 * h], w[h:3 * h]], axis=0)


class StateIndex:
    """Finds which PyTorch tensors (parameters and buffers) an exported tensor's
    values come from. Relies on the values being distinct (export_models.py
    re-initialises every tensor from a seeded normal distribution): a tensor is a
    candidate source when its first, middle and last values all occur in the
    exported tensor; _classify then checks the exact relation."""

    def __init__(self, model):
        self.params = OrderedDict()  # first name -> array (distinct Parameters)
        self.buffers = OrderedDict()
        for name, p in model.named_parameters():
            self.params[name] = p.detach().numpy()
        for name, b in model.named_buffers():
            if b.dtype.is_floating_point:
                self.buffers[name] = b.detach().numpy()
        self.names = list(self.params) + list(self.buffers)
        fps = []
        for name in self.names:
            flat = np.ascontiguousarray(self.array(name), dtype=np.float32).ravel()
            fps.append(flat[[0, flat.size // 2, flat.size - 1]].view(np.uint32))
        self.fingerprints = np.stack(fps)  # (tensors, 3)

    def array(self, name):
        return self.params[name] if name in self.params else self.buffers[name]

    def sources(self, arr):
        flat = np.ascontiguousarray(arr, dtype=np.float32).ravel()
        if flat.size == 0 or np.unique(flat).size < 0.5 * flat.size:
            return None  # values not distinctive enough to attribute
        present = np.isin(self.fingerprints, flat.view(np.uint32)).all(axis=1)
        return [n for n, ok in zip(self.names, present) if ok and self.array(n).size <= flat.size]


def _consumer_slot(graph, name):
    for n in graph.node:
        for k, i in enumerate(n.input):
            if i == name:
                return n, k
    return None, None


def _classify(index, graph, name, arr, srcs):
    """Returns (transform, verified) for an exported tensor arr built from srcs."""
    if len(srcs) == 1:
        p = index.array(srcs[0])
        if p.shape == arr.shape and np.array_equal(p, arr):
            return "identity"
        if p.ndim == 2 and p.T.shape == arr.shape and np.array_equal(p.T, arr):
            return "transpose"
    node, slot = _consumer_slot(graph, name)
    if node is not None and node.op_type == "LSTM" and slot in (1, 2, 3):
        hidden = [a.i for a in node.attribute if a.name == "hidden_size"][0]
        fwd = [s for s in srcs if not s.endswith("_reverse")]
        rev = [s for s in srcs if s.endswith("_reverse")]
        dirs = [d for d in (fwd, rev) if d]
        if slot == 3:  # B = [Wb (ih) ; Rb (hh)] per direction
            rows = [np.concatenate([_lstm_reorder(index.array(s), hidden)
                                    for s in sorted(d, key=lambda s: "hh" in s)]) for d in dirs]
        else:
            rows = [_lstm_reorder(index.array(d[0]), hidden) for d in dirs]
        expect = np.stack(rows)
        if expect.shape == arr.shape and np.array_equal(expect, arr):
            return "lstm_" + "WRB"[slot - 1] + "_gates_iofc"
    total = sum(index.array(s).size for s in srcs)
    return "rearranged" if total == arr.size else "derived"


def state_names(model):
    """(parameter names, buffer names) including every alias of a shared Parameter."""
    params, buffers = set(), set()
    for name, t in model.state_dict(keep_vars=True).items():
        (params if isinstance(t, torch.nn.Parameter) else buffers).add(name)
    return params, buffers


def map_state_inputs(model, struct_model, valued_model, data_inputs):
    """{onnx input name: {"sources": [...], "kind": "param"|"buffer", "transform": ...}}
    for every non-data graph input of struct_model. valued_model is the same export with
    export_params=True (may be None when every input is named after a state_dict key)."""
    index = StateIndex(model)
    named_params, named_buffers = state_names(model)
    values = {}
    if valued_model is not None:
        values = {t.name: onnx.numpy_helper.to_array(t) for t in valued_model.graph.initializer}
    out = OrderedDict()
    for inp in struct_model.graph.input:
        name = inp.name
        if name in data_inputs:
            continue
        if name in named_params:
            out[name] = {"sources": [name], "kind": "param", "transform": "identity"}
            continue
        if name in named_buffers:
            out[name] = {"sources": [name], "kind": "buffer", "transform": "identity"}
            continue
        arr = values.get(name)
        srcs = index.sources(arr) if arr is not None else None
        if not srcs:
            out[name] = {"sources": [], "kind": "param", "transform": "unknown"}
            continue
        kind = "buffer" if all(s in index.buffers for s in srcs) else "param"
        out[name] = {"sources": srcs, "kind": kind,
                     "transform": _classify(index, struct_model.graph, name, arr, srcs)}
    return out
