"""A small numpy interpreter for the ONNX operators Tessera's shipped models use (calibration and cross-checks).

onnx 1.12 has no reference evaluator and onnxruntime is not in Debian, so the model scripts run graphs
here. Batches run along axis 0 whatever the declared batch size. Rounding is half-to-even as ONNX says.
"""
import numpy as np
from onnx import numpy_helper

_INT_RANGES = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255), np.dtype(np.int32): (-2**31, 2**31 - 1)}


def _attrs(node):
    out = {}
    for a in node.attribute:
        if a.type == a.INT:
            out[a.name] = a.i
        elif a.type == a.FLOAT:
            out[a.name] = a.f
        elif a.type == a.INTS:
            out[a.name] = list(a.ints)
        elif a.type == a.STRING:
            out[a.name] = a.s.decode()
        elif a.type == a.TENSOR:
            out[a.name] = numpy_helper.to_array(a.t)
    return out


def _pad_nchw(x, pads, value=0.0):
    nd = len(pads) // 2
    widths = [(0, 0), (0, 0)] + [(pads[i], pads[i + nd]) for i in range(nd)]
    return np.pad(x, widths, constant_values=value)


def _windows(x, kh, kw, sh, sw):
    """N,C,H,W -> N,C,OH,OW,kh,kw view of every kernel window."""
    n, c, h, w = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    s = x.strides
    return np.lib.stride_tricks.as_strided(x, (n, c, oh, ow, kh, kw),
                                           (s[0], s[1], s[2] * sh, s[3] * sw, s[2], s[3]), writeable=False)


def _conv(x, w, b, a):
    if a.get("group", 1) != 1:
        raise NotImplementedError("grouped Conv")
    kh, kw = w.shape[2:]
    sh, sw = a.get("strides", [1, 1])
    if a.get("dilations", [1, 1]) != [1, 1]:
        raise NotImplementedError("dilated Conv")
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise NotImplementedError("auto_pad Conv")
    xp = _pad_nchw(x, a.get("pads", [0, 0, 0, 0]))
    win = _windows(xp, kh, kw, sh, sw)                      # N,C,OH,OW,kh,kw
    n, c, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    y = cols @ w.reshape(w.shape[0], -1).T                   # (N*OH*OW, M)
    if b is not None:
        y = y + b
    return y.reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)


def _pool(x, a, reduce):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pads = a.get("pads", [0, 0, 0, 0])
    if a.get("ceil_mode", 0) or a.get("dilations", [1, 1]) != [1, 1]:
        raise NotImplementedError("ceil_mode/dilated pooling")
    if reduce == "max":
        fill = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
        return _windows(_pad_nchw(x, pads, fill), kh, kw, sh, sw).max(axis=(4, 5))
    if any(pads) and not a.get("count_include_pad", 0):
        raise NotImplementedError("padded AveragePool excluding pads")
    return _windows(_pad_nchw(x, pads), kh, kw, sh, sw).mean(axis=(4, 5), dtype=np.float32)


def _saturate_round(v, dtype):
    lo, hi = _INT_RANGES[np.dtype(dtype)]
    return np.clip(np.rint(v), lo, hi).astype(dtype)


def _per_axis(param, ndim, axis):
    param = np.asarray(param)
    if param.ndim == 0:
        return param
    shape = [1] * ndim
    shape[axis] = param.size
    return param.reshape(shape)


def _quantize(x, scale, zp, axis=1):
    zp = np.zeros((), np.uint8) if zp is None else zp
    q = x / _per_axis(scale, x.ndim, axis) + _per_axis(zp, x.ndim, axis).astype(np.float32)
    return _saturate_round(q, zp.dtype)


def _dequantize(x, scale, zp, axis=1):
    zp = np.zeros((), x.dtype) if zp is None else zp
    diff = x.astype(np.int64) - _per_axis(zp, x.ndim, axis).astype(np.int64)
    return (diff * _per_axis(scale, x.ndim, axis)).astype(np.float32)


def _qlinear_requant(acc, scale, y_scale, y_zp, ndim, axis):
    return _saturate_round(acc.astype(np.float64) * _per_axis(scale, ndim, axis).astype(np.float64)
                           / np.float64(y_scale) + np.float64(y_zp), y_zp.dtype)


def run_node(node, ins):
    op, a = node.op_type, _attrs(node)
    x = ins[0] if ins else None
    if op == "Conv":
        return [_conv(x, ins[1], ins[2] if len(ins) > 2 else None, a).astype(np.float32)]
    if op == "BatchNormalization":
        _, g, b, m, v = ins
        s = g / np.sqrt(v + a.get("epsilon", 1e-5))
        return [(x * s[None, :, None, None] + (b - m * s)[None, :, None, None]).astype(np.float32)]
    if op == "Relu":
        return [np.maximum(x, np.zeros((), x.dtype))]
    if op == "Clip":
        lo = ins[1] if len(ins) > 1 and ins[1] is not None else -np.inf
        hi = ins[2] if len(ins) > 2 and ins[2] is not None else np.inf
        return [np.clip(x, lo, hi).astype(x.dtype)]
    if op == "Add":
        return [x + ins[1]]
    if op == "MaxPool":
        return [_pool(x, a, "max")]
    if op == "AveragePool":
        return [_pool(x, a, "avg")]
    if op == "GlobalAveragePool":
        return [x.mean(axis=(2, 3), keepdims=True, dtype=np.float32)]
    if op == "Flatten":
        axis = a.get("axis", 1)
        return [x.reshape(int(np.prod(x.shape[:axis])), -1)]
    if op == "Reshape":
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(ins[1].tolist())]
        return [x.reshape(shape)]
    if op in ("Identity", "Dropout"):
        return [x]
    if op == "Gemm":
        aa = x.T if a.get("transA", 0) else x
        bb = ins[1].T if a.get("transB", 0) else ins[1]
        y = a.get("alpha", 1.0) * (aa @ bb)
        if len(ins) > 2 and ins[2] is not None:
            y = y + a.get("beta", 1.0) * ins[2]
        return [y.astype(np.float32)]
    if op == "MatMul":
        return [x @ ins[1]]
    if op == "Softmax":
        e = np.exp(x - x.max(axis=a.get("axis", -1), keepdims=True))
        return [e / e.sum(axis=a.get("axis", -1), keepdims=True)]
    if op == "QuantizeLinear":
        return [_quantize(x, ins[1], ins[2] if len(ins) > 2 else None, a.get("axis", 1))]
    if op == "DequantizeLinear":
        return [_dequantize(x, ins[1], ins[2] if len(ins) > 2 else None, a.get("axis", 1))]
    if op == "QLinearConv":
        x_s, x_zp, w, w_s, w_zp, y_s, y_zp = ins[1:8]
        bias = ins[8] if len(ins) > 8 else None
        xi = x.astype(np.int64) - x_zp.astype(np.int64)
        wi = w.astype(np.int64) - _per_axis(w_zp, 4, 0).astype(np.int64)
        # int64 products are exact; float64 matmul of small integers is too and far faster.
        acc = np.rint(_conv(xi.astype(np.float64), wi.astype(np.float64), None, a)).astype(np.int64)
        if bias is not None:
            acc = acc + bias.astype(np.int64)[None, :, None, None]
        return [_qlinear_requant(acc, np.float32(x_s) * w_s.astype(np.float32), y_s, y_zp, 4, 1)]
    if op == "QLinearMatMul":
        a_s, a_zp, b, b_s, b_zp, y_s, y_zp = ins[1:8]
        ai = (x.astype(np.int64) - a_zp.astype(np.int64)).astype(np.float64)
        bi = (b.astype(np.int64) - _per_axis(b_zp, 2, 1).astype(np.int64)).astype(np.float64)
        acc = np.rint(ai @ bi).astype(np.int64)
        return [_qlinear_requant(acc, np.float32(a_s) * b_s.astype(np.float32), y_s, y_zp, 2, 1)]
    raise NotImplementedError(f"node {node.name or node.output[0]}: op {op} not in the numpy evaluator")


def run(model, feeds, keep_all=False, on_tensor=None):
    """Runs the graph on feeds {input name: array}. Returns the outputs (or every tensor with keep_all).
    on_tensor(name, value) sees each computed tensor, for calibration."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    env[""] = None
    for node in model.graph.node:
        if node.op_type == "Constant":
            value = _attrs(node)["value"]
            results = [value]
        else:
            missing = [n for n in node.input if n not in env]
            if missing:
                raise ValueError(f"node {node.name or node.output[0]}: inputs {missing} not computed (graph not sorted?)")
            results = run_node(node, [env[n] for n in node.input])
        for name, value in zip(node.output, results):
            env[name] = value
            if on_tensor is not None:
                on_tensor(name, value)
    if keep_all:
        return env
    return [env[o.name] for o in model.graph.output]
