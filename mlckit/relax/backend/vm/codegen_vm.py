"""Relax → VM bytecode (as TVM's ``relax/backend/vm/codegen_vm.cc``).

Input: a module lowered by the VM pipeline (no dataflow blocks, no ``call_tir``, explicit
memory, shapes lowered).  Each Relax function becomes bytecode; registers ``%0 …`` hold
the parameters, then one register per value.

- a call of a PrimFunc / packed function / Relax function → ``call`` of its table entry;
- ``R.memory.alloc_storage`` / ``alloc_tensor`` → ``vm.builtin.alloc_storage`` (with
  ``%vm``) / ``vm.builtin.alloc_tensor``; kills → ``vm.builtin.null_value``;
- ``R.call_builtin_with_ctx(f, args)`` → ``call f in: %vm, args…``;
- tuples → ``vm.builtin.make_tuple`` / ``vm.builtin.tuple_getitem``; a var bound to a
  var → ``vm.builtin.copy``;
- ``if`` → ``vm.builtin.read_if_cond``, ``If``, ``Goto``, with ``vm.builtin.copy`` of both
  branches into one register;
- constants: small ints are immediates (``i784``); tensors, shapes, strings and dtypes go
  to the constant pool (``c[0]``).

Example::

    eb = ExecBuilder(); codegen(eb, lowered_mod); ex = eb.get()
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.relax.expr import (
    Call,
    Constant,
    DataTypeImm,
    ExternFunc,
    Function,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
)
from mlckit.relax.struct_info import TupleStructInfo
from mlckit.runtime.vm.bytecode import VM_REGISTER, VOID_REGISTER, Arg, ArgKind
from mlckit.runtime.vm.executable import DataType, ExecBuilder, ShapeTuple
from mlckit.tir import expr as tx


class VMCodegenError(TVMValueError):
    """The module cannot be turned into bytecode (a lowering step is missing)."""


# ops lowered to one builtin call with the same arguments (``%vm`` first when flagged)
_SIMPLE_OPS = {
    "relax.memory.alloc_tensor": ("vm.builtin.alloc_tensor", False),
    "relax.vm.alloc_tensor": ("vm.builtin.alloc_tensor", False),
    "relax.vm.alloc_storage": ("vm.builtin.alloc_storage", True),
    "relax.shape_of": ("vm.builtin.shape_of", False),
    "relax.print": ("relax.run.print", False),
    "relax.assert_op": ("relax.run.assert_op", False),
}
_KILL_OPS = ("relax.memory.kill_storage", "relax.memory.kill_tensor", "relax.vm.kill_object")


class _CodeGen:
    def __init__(self, builder: ExecBuilder, mod: IRModule):
        self.b = builder
        self.mod = mod

    def codegen(self, gv: GlobalVar, func: Function) -> None:
        name = func.attrs.get("global_symbol", gv.name_hint)
        self.name = name
        self.nreg = 0
        self.vars: dict[int, Arg] = {}
        self.b.emit_function(name, len(func.params), [p.name_hint for p in func.params],
                             [p.struct_info_ for p in func.params])
        for p in func.params:
            self.vars[id(p)] = Arg.register(self.new_reg())
        ret = self.visit(func.body)
        self.b.emit_ret(self.ensure_reg(ret).value)
        self.b.end_function(name, self.nreg)

    def new_reg(self) -> int:
        r = self.nreg
        self.nreg += 1
        return r

    def ensure_reg(self, arg: Arg) -> Arg:
        if arg.kind == ArgKind.Register:
            return arg
        dst = self.new_reg()
        self.b.emit_call("vm.builtin.copy", [arg], dst)
        return Arg.register(dst)

    # -- expressions --------------------------------------------------------------------
    def visit(self, expr) -> Arg:
        method = getattr(self, "visit_" + type(expr).__name__, None)
        if method is None:
            for base in type(expr).__mro__:
                method = getattr(self, "visit_" + base.__name__, None)
                if method is not None:
                    break
        if method is None:
            raise VMCodegenError(f"{self.name}: the VM cannot run a {type(expr).__name__} "
                                 "expression")
        return method(expr)

    def visit_SeqExpr(self, seq: SeqExpr) -> Arg:  # noqa: N802
        for block in seq.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(binding, MatchCast):
                    raise VMCodegenError(f"{self.name}: R.match_cast must be lowered by "
                                         "VMShapeLower before codegen")
                arg = self.visit(value)
                if isinstance(value, Var):
                    dst = self.new_reg()
                    self.b.emit_call("vm.builtin.copy", [arg], dst)
                    arg = Arg.register(dst)
                self.vars[id(binding.var)] = arg
        return self.visit(seq.body)

    def visit_Var(self, var: Var) -> Arg:  # noqa: N802
        arg = self.vars.get(id(var))
        if arg is None:
            raise VMCodegenError(f"{self.name}: variable {var.name_hint!r} is used but not defined")
        return arg

    def visit_Constant(self, c: Constant) -> Arg:  # noqa: N802
        return self.b.convert_constant(c.data)

    def visit_ShapeExpr(self, s: ShapeExpr) -> Arg:  # noqa: N802
        dims = []
        for v in s.values:
            if not isinstance(v, tx.IntImm):
                raise VMCodegenError(f"{self.name}: symbolic shape {s!r} reached codegen; run "
                                     "VMShapeLower first")
            dims.append(int(v.value))
        return self.b.convert_constant(ShapeTuple(dims))

    def visit_PrimValue(self, p: PrimValue) -> Arg:  # noqa: N802
        v = p.value
        if isinstance(v, tx.IntImm):
            return self.b.convert_constant(int(v.value))
        if isinstance(v, tx.FloatImm):
            return self.b.convert_constant(float(v.value))
        raise VMCodegenError(f"{self.name}: symbolic prim value reached codegen; run VMShapeLower")

    def visit_StringImm(self, s: StringImm) -> Arg:  # noqa: N802
        return self.b.convert_constant(str(s.value))

    def visit_DataTypeImm(self, d: DataTypeImm) -> Arg:  # noqa: N802
        return self.b.convert_constant(DataType(d.value))

    def visit_Tuple(self, t: Tuple) -> Arg:  # noqa: N802
        args = [self.visit(f) for f in t.fields]
        dst = self.new_reg()
        self.b.emit_call("vm.builtin.make_tuple", args, dst)
        return Arg.register(dst)

    def visit_TupleGetItem(self, t: TupleGetItem) -> Arg:  # noqa: N802
        args = [self.visit(t.tuple_value), self.b.convert_constant(int(t.index))]
        dst = self.new_reg()
        self.b.emit_call("vm.builtin.tuple_getitem", args, dst)
        return Arg.register(dst)

    def visit_GlobalVar(self, gv: GlobalVar) -> Arg:  # noqa: N802
        func = self.mod.functions.get(gv) if gv in self.mod.functions else None
        if func is None and gv.name_hint in self.mod:
            func = self.mod[gv.name_hint]
        kind = "vm_func" if isinstance(func, Function) else "packed_func"
        name = gv.name_hint
        if isinstance(func, Function):
            name = func.attrs.get("global_symbol", name)
        elif func is not None and hasattr(func, "attrs"):
            name = func.attrs.get("global_symbol", name)
        idx = self.b.declare_function(name, kind)
        return Arg.func_idx(idx)

    def visit_ExternFunc(self, f: ExternFunc) -> Arg:  # noqa: N802
        return Arg.func_idx(self.b.declare_function(f.global_symbol, "packed_func"))

    def visit_If(self, node: If) -> Arg:  # noqa: N802
        cond = self.visit(node.cond)
        cond_reg = self.new_reg()
        self.b.emit_call("vm.builtin.read_if_cond", [cond], cond_reg)
        if_at = self.b.num_instructions()
        self.b.emit_if(cond_reg, 3)
        start = self.b.num_instructions()
        true_value = self.visit(node.true_branch)
        merge = self.new_reg()
        self.b.emit_call("vm.builtin.copy", [true_value], merge)
        goto_at = self.b.num_instructions()
        self.b.emit_goto(1)
        false_offset = self.b.num_instructions() - start + 1
        false_value = self.visit(node.false_branch)
        self.b.emit_call("vm.builtin.copy", [false_value], merge)
        self.b.set_instruction(if_at, false_offset=false_offset)
        self.b.set_instruction(goto_at, pc_offset=self.b.num_instructions() - goto_at)
        return Arg.register(merge)

    def visit_Call(self, call: Call) -> Arg:  # noqa: N802
        op = call.op
        if isinstance(op, Op) and op.name == "relax.null_value":
            return Arg.register(VOID_REGISTER)
        sinfo = call.__dict__.get("struct_info_")
        if sinfo is None:
            try:
                sinfo = call.struct_info
            except Exception:  # noqa: BLE001 - unknown: keep the value
                sinfo = None
        void = isinstance(sinfo, TupleStructInfo) and not sinfo.fields
        if isinstance(op, Op):
            return self.visit_op_call(call, op, void)
        dst = VOID_REGISTER if void else self.new_reg()
        func = self.visit(op)
        args = [self.visit(a) for a in call.args]
        if func.kind == ArgKind.FuncIdx:
            self.b.emit_call(func, args, dst)
        else:
            self.b.emit_call("vm.builtin.invoke_closure", [Arg.register(VM_REGISTER), func, *args],
                             dst)
        return Arg.register(dst)

    def visit_op_call(self, call: Call, op: Op, void: bool) -> Arg:
        name = op.name
        if name in _KILL_OPS:
            target = self.visit(call.args[0])
            self.b.emit_call("vm.builtin.null_value", [], target.value)
            return target
        dst = VOID_REGISTER if void else self.new_reg()
        if name == "relax.call_builtin_with_ctx":
            func = self.visit(call.args[0])
            fields = call.args[1].fields if isinstance(call.args[1], Tuple) else [call.args[1]]
            args = [Arg.register(VM_REGISTER)] + [self.visit(a) for a in fields]
            self.b.emit_call(func, args, dst)
        elif name == "relax.memory.alloc_storage":
            size, device, scope, dtype = (self.visit(a) for a in call.args)
            self.b.emit_call("vm.builtin.alloc_storage",
                             [Arg.register(VM_REGISTER), size, device, dtype, scope], dst)
        elif name in _SIMPLE_OPS:
            builtin, with_vm = _SIMPLE_OPS[name]
            args = [self.visit(a) for a in call.args]
            if with_vm:
                args.insert(0, Arg.register(VM_REGISTER))
            self.b.emit_call(builtin, args, dst)
        elif name == "relax.call_pure_packed":
            func = self.visit(call.args[0])
            self.b.emit_call(func, [self.visit(a) for a in call.args[1:]], dst)
        elif name == "relax.vm.call_tir_dyn":
            func = self.visit(call.args[0])
            fields = call.args[1].fields
            self.b.emit_call("vm.builtin.call_tir_dyn", [func, *[self.visit(a) for a in fields]],
                             dst)
        elif name in ("relax.call_tir", "relax.call_dps_packed", "relax.builtin.alloc_tensor"):
            raise VMCodegenError(f"{self.name}: {name} must be lowered before codegen (run "
                                 "CallTIRRewrite, StaticPlanBlockMemory and LowerAllocTensor; "
                                 "relax.build does)")
        else:
            raise VMCodegenError(f"{self.name}: the operator {name} has no VM lowering; legalize it "
                                 "to TIR first (relax.transform.LegalizeOps) or call a kernel with "
                                 "R.call_tir")
        return Arg.register(dst)


def codegen(builder: ExecBuilder, mod: IRModule) -> None:
    """Emit bytecode for every Relax function of ``mod`` into ``builder``."""
    gen = _CodeGen(builder, mod)
    funcs = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, Function)]
    for gv, func in funcs:
        builder.declare_function(func.attrs.get("global_symbol", gv.name_hint), "vm_func")
    for gv, func in funcs:
        gen.codegen(gv, func)
