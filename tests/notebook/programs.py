"""TVMScript programs the notebook-tool tests share, as text (what a notebook cell holds)."""

# The course's end-to-end MLP (notebook 03, "MyModule"): three PrimFuncs and a Relax main
# calling them with R.call_tir inside a dataflow block.
MLP_MODULE = '''
@I.ir_module
class MyModule:
    @T.prim_func
    def linear0(x: T.handle, w: T.Buffer((T.int64(128), T.int64(784)), "float32"),
                b: T.Buffer((T.int64(128),), "float32"), z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(784)), "float32")
        Z = T.match_buffer(z, (n, T.int64(128)), "float32")
        Y = T.alloc_buffer((n, T.int64(128)), "float32")
        for i, j, k in T.grid(n, T.int64(128), T.int64(784)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * w[vj, vk]
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + b[vj]

    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        Y = T.match_buffer(y, (n, T.int64(128)), "float32")
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(x: T.handle, w: T.Buffer((T.int64(10), T.int64(128)), "float32"),
                b: T.Buffer((T.int64(10),), "float32"), z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        Z = T.match_buffer(z, (n, T.int64(10)), "float32")
        Y = T.alloc_buffer((n, T.int64(10)), "float32")
        for i, j, k in T.grid(n, T.int64(10), T.int64(128)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * w[vj, vk]
        for i, j in T.grid(n, T.int64(10)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + b[vj]

    @R.function
    def main(x: R.Tensor(("n", 784), "float32"),
             w0: R.Tensor((128, 784), "float32"), b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((10, 128), "float32"), b1: R.Tensor((10,), "float32")):
        n = T.int64()
        cls = MyModule
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((n, 128), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((n, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((n, 10), "float32"))
            R.output(out)
        return out'''
