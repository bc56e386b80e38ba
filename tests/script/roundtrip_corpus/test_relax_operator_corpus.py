"""Round-trip corpus of high-level Relax operators (linear algebra, manipulation, reductions,
nn): each call prints with TVM's attributes, parses back structurally equal, and printing is
stable."""

from mlckit.script import from_source
from tests.script.roundtrip import assert_roundtrip

OPERATORS = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"),
             g: R.Tensor((8,), "float32"), i: R.Tensor((2,), "int64")):
        with R.dataflow():
            a = R.nn.conv2d(x, w, strides=1, padding=(1, 1), groups=1)
            b = R.nn.max_pool2d(a, pool_size=2, strides=2, ceil_mode=True)
            c = R.nn.avg_pool2d(a, pool_size=(2, 2), strides=(2, 2), count_include_pad=True)
            d = R.nn.adaptive_avg_pool2d(a, (1, 1))
            e = R.nn.layer_norm(x, g, g, axes=[-1], epsilon=1e-6)
            f = R.nn.softmax(x, axis=1)
            h = R.nn.log_softmax(x)
            bn = R.nn.batch_norm(a, R.ones((4,), "float32"), R.zeros((4,), "float32"),
                                 R.zeros((4,), "float32"), R.ones((4,), "float32"), axis=1,
                                 training=False)
            dr = R.nn.dropout(x, 0.1)
            s = R.sum(x, axis=[1], keepdims=True)
            m = R.mean(x)
            mx = R.max(x, axis=-1)
            am = R.argmax(x, axis=1)
            r = R.reshape(x, (2, -1))
            p = R.permute_dims(x, [0, 2, 3, 1])
            fl = R.flatten(x)
            ed = R.expand_dims(x, [0])
            sq = R.squeeze(ed, [0])
            cc = R.concat((x, x), axis=1)
            sp = R.split(x, [1], axis=1)
            bt = R.broadcast_to(g, (3, 8))
            tk = R.take(x, i, axis=0)
            ss = R.strided_slice(x, axes=[2], begin=[1], end=[5], strides=[2])
            gl = R.nn.gelu(x)
            gt = R.nn.gelu_tanh(x)
            sl = R.nn.silu(R.nn.relu(x))
            mm = R.matmul(x, x, out_dtype="float32")
            R.output(a, b, c, d, e, f, h, bn, dr, s, m, mx, am, r, p, fl, sq, cc, sp, bt, tk,
                     ss, gl, gt, sl, mm)
        return (a, b, c, d, e, f, h, bn, dr, s, m, mx, am, r, p, fl, sq, cc, sp, bt, tk, ss,
                gl, gt, sl, mm)
'''


def test_high_level_operators_roundtrip():
    text = assert_roundtrip(from_source(OPERATORS))
    assert ('R.nn.max_pool2d(a, pool_size=[2, 2], strides=[2, 2], dilation=[1, 1], '
            'padding=[0, 0, 0, 0], ceil_mode=True, count_include_pad=False, layout="NCHW", '
            'out_layout="NCHW")') in text
    assert "R.reshape(x, R.shape([2, 192]))" in text
    assert "R.split(x, indices_or_sections=[1], axis=1)" in text
