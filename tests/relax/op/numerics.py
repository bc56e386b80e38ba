"""NumPy references of the windowed operators, random inputs, and a VM built once per
module (``run``/``call`` are the shared helpers of ``helpers.py``)."""

import numpy as np

import mlckit
from mlckit import relax

from .helpers import call, run  # noqa: F401 - re-exported for the tests

TARGETS = ("llvm", "lnumpy")


def vm_of(mod, target="llvm"):
    """A VM for ``mod`` (build once, call many times: shapes may be symbolic)."""
    return relax.VirtualMachine(relax.build(mod, target), mlckit.cpu())


def random(shape, dtype="float32", seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def conv2d_nchw(x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """A direct NumPy 2-d convolution (NCHW data, OIHW kernel)."""
    top, left, bottom, right = padding
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, h, wd = xp.shape
    o, cg, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilation
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    per_group = o // groups
    for f in range(o):
        g = f // per_group
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, f] += np.einsum("nchw,c->nhw", patch, w[f, :, i, j])
    return out


def pool2d_nchw(x, kind, pool_size, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                ceil_mode=False, count_include_pad=False):
    """A direct NumPy 2-d max / average pooling (NCHW), as PyTorch defines it."""
    top, left, bottom, right = padding
    n, c, h, w = x.shape
    kh, kw = pool_size
    sh, sw = strides
    dh, dw = dilation

    def out_size(size, k, s, d, before, after):
        numerator = size + before + after - d * (k - 1) - 1
        if ceil_mode:
            out = -(-numerator // s) + 1
            if (out - 1) * s >= size + before:
                out -= 1
            return out
        return numerator // s + 1

    oh = out_size(h, kh, sh, dh, top, bottom)
    ow = out_size(w, kw, sw, dw, left, right)
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            rows = [i * sh - top + a * dh for a in range(kh)]
            cols = [j * sw - left + b * dw for b in range(kw)]
            inside = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            values = np.stack([x[:, :, r, q] for r, q in inside], axis=-1)
            if kind == "max":
                out[:, :, i, j] = values.max(-1)
            elif count_include_pad:
                end_r = min(rows[-1], h + bottom - 1)
                end_c = min(cols[-1], w + right - 1)
                count = ((end_r - rows[0]) // dh + 1) * ((end_c - cols[0]) // dw + 1)
                out[:, :, i, j] = values.sum(-1) / count
            else:
                out[:, :, i, j] = values.mean(-1)
    return out
