"""The IRModule frame: collects functions (declared first, defined later) and attributes."""

from __future__ import annotations

from mlckit.ir.module import GlobalVar, IRModule

from ..base import IRBuilder, IRBuilderError, IRBuilderFrame


class IRModuleFrame(IRBuilderFrame):
    """``with I.ir_module():`` — on exit, the IRModule of the functions defined inside."""

    def __init__(self):
        super().__init__()
        self.global_var_map: dict[str, GlobalVar] = {}
        self.functions: dict[GlobalVar, object] = {}
        self.attrs: dict = {}
        self.global_infos: dict = {}

    def exit(self) -> None:
        missing = [gv.name_hint for gv, f in self.functions.items() if f is None]
        if missing:
            raise IRBuilderError(f"functions declared but never defined: {', '.join(missing)}")
        mod = IRModule(dict(self.functions), dict(self.attrs), dict(self.global_infos))
        builder = IRBuilder.current()
        if builder.frames:
            raise IRBuilderError("I.ir_module() must be the outermost frame")
        builder.set_result(mod)
