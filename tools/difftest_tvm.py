"""Differential tester: random schedules applied by mlckit and by real TVM 0.27, compared.

Usage (from the repository root; TVM 0.27 installed in another Python)::

    nice -n 10 python tools/difftest_tvm.py --cases 2000 --seed 0 \\
        --tvm-python /tmp/tvmenv/bin/python --report difftest_report

It draws ``--cases`` random kernels from a family of course-like PrimFuncs (matmul,
mm_relu, batch matmul, a padded conv2d, softmax, row and whole-tensor sums, elementwise
chains) with random shapes, and for each a random sequence of schedule primitives (split,
fuse, reorder, compute_at, reverse_compute_at, compute_inline, reverse_compute_inline,
cache_read, cache_write, decompose_reduction, rfactor, blockize, parallel, vectorize,
unroll, set_scope, transform_layout with a drawn index map, storage_align, add_unit_loop,
block look-ups including blocks nested in ``T.init()``).  The steps are
drawn against mlckit's state as it goes (so most are legal, a few are not) and written as
JSON: blocks by name, loops as ``(block name, index in get_loops)``.

mlckit applies them in this process; TVM applies the same steps in a subprocess
(``--tvm-python``, many cases per process, restarted after a crash), each side in its own
spelling (TVM 0.27: ``tirx``, ``@T.prim_func(s_tir=True)``, ``T.sblock``,
``tvm.s_tir.Schedule``, ``get_sblock``).  For each case it compares:

- each step's accept/reject;
- the final function: TVM's printed TVMScript, respelled to v0.23 names, parsed by mlckit
  and ``structural_equal`` to mlckit's; and its block and buffer names;
- the numbers: both builds (mlckit: ``--target``, default ``lnumpy``; TVM:
  ``{"kind": "llvm", "num-cores": 1}``) run on the same random inputs, compared with a
  tolerance (and mlckit's also against the unscheduled kernel);
- crashes: an exception from mlckit that is not a ``TVMError`` is always a bug.

When TVM's own parser refuses the script TVM printed (ill-formed IR), TVM's script is no
reference: the texts are compared as printed, or mlckit's function checked to be well-formed.

It prints one summary line, e.g. ``2000 cases: 1900 agree (95.0%), TVM crashes internally
(mlckit right) 18, TVM's numbers wrong (mlckit refuses or right) 32, TVM prints a script its
parser refuses 3; real differences 47: accept/reject differs 10,
script differs 37, numbers differ 0, mlckit crashes 0`` (each case
counted once, where its fault lies: see ``classify``) and writes every difference to
``<report>.json`` and a grouped ``<report>.md`` for triage.  ``--only ID[,ID]`` re-runs
chosen cases (same seed), ``--replay REPORT.json`` re-runs a report's cases with their steps
as recorded (after the drawing changed), and ``--show`` prints their steps and both scripts.

This is a developer tool, not part of CI (it needs TVM).  The same file is the TVM-side
worker (``--worker FILE``), run by TVM's Python; that part imports no mlckit.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np
from difftest_kernels import FAMILIES  # beside this script (on sys.path when it runs)

SCOPES = ("global", "shared", "local")
CASE_SECONDS = 300  # TVM's time for one case before its worker is stopped
TVM_TARGET = {"kind": "llvm", "num-cores": 1}

# ------------------------------------------------------------------------------------------
# Spellings: the kernels (difftest_kernels.py) are written in v0.23's.
# ------------------------------------------------------------------------------------------


def to_tvm_spelling(src: str) -> str:
    """v0.23 TVMScript -> TVM 0.27's (``T.sblock``, ``@T.prim_func(s_tir=True)``).

    ``T.alloc_buffer`` becomes ``T.sblock_alloc_buffer``: in TVM 0.27 the former is an
    ``AllocBuffer`` statement, the latter the root block's allocation, as in v0.23 (and
    TVM 0.27's primitives mishandle the statement form, e.g. cache_write renames it)."""
    src = src.replace("T.block(", "T.sblock(").replace("T.alloc_buffer(", "T.sblock_alloc_buffer(")
    return src.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")


def from_tvm_spelling(src: str) -> str:
    """TVM 0.27's printed TVMScript -> v0.23 names, without the import comments."""
    lines = [ln for ln in src.splitlines() if not ln.startswith("# from tvm")]
    src = "\n".join(lines).replace("T.sblock(", "T.block(")
    src = src.replace("T.sblock_alloc_buffer(", "T.alloc_buffer(")
    return src.replace("@T.prim_func(s_tir=True)", "@T.prim_func")


# ------------------------------------------------------------------------------------------
# Steps: JSON dicts, applied the same way on both sides.
# ------------------------------------------------------------------------------------------


class HarnessError(Exception):
    """A step that names a loop index that is not there (both sides skip it alike)."""


def _loop(sch, get_block, step, key="loop"):
    loops = sch.get_loops(get_block(step["block"]))
    if step[key] >= len(loops):
        raise HarnessError(f"block {step['block']!r} has {len(loops)} loops")
    return loops[step[key]]


def apply_step(sch, step, get_block):
    """Apply one step (a dict) to ``sch``; ``get_block`` is ``get_block`` or ``get_sblock``."""
    op = step["op"]
    if op == "get_block":
        get_block(step["block"])
    elif op == "split":
        sch.split(_loop(sch, get_block, step), factors=step["factors"])
    elif op in ("fuse", "reorder"):
        loops = sch.get_loops(get_block(step["block"]))
        if max(step["loops"]) >= len(loops):
            raise HarnessError("loop index out of range")
        getattr(sch, op)(*[loops[i] for i in step["loops"]])
    elif op in ("parallel", "vectorize", "unroll"):
        getattr(sch, op)(_loop(sch, get_block, step))
    elif op in ("compute_at", "reverse_compute_at"):
        block = get_block(step["block"])
        target = sch.get_loops(get_block(step["target"]))
        if step["loop"] >= len(target):
            raise HarnessError("loop index out of range")
        getattr(sch, op)(block, target[step["loop"]], preserve_unit_loops=step["preserve"])
    elif op in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, op)(get_block(step["block"]))
    elif op in ("cache_read", "cache_write"):
        getattr(sch, op)(get_block(step["block"]), step["index"], step["scope"])
    elif op == "set_scope":
        sch.set_scope(get_block(step["block"]), step["index"], step["scope"])
    elif op == "decompose_reduction":
        sch.decompose_reduction(get_block(step["block"]), _loop(sch, get_block, step))
    elif op == "rfactor":
        sch.rfactor(_loop(sch, get_block, step), step["factor_axis"])
    elif op == "blockize":
        sch.blockize(_loop(sch, get_block, step), preserve_unit_iters=step["preserve"])
    elif op == "transform_layout":  # the map travels as a lambda's text
        sch.transform_layout(get_block(step["block"]), tuple(step["buffer"]),
                             eval(step["map"]))  # noqa: S307 (drawn by draw_step)
    elif op == "storage_align":
        sch.storage_align(get_block(step["block"]), step["index"], step["axis"],
                          step["factor"], step["offset"])
    elif op == "add_unit_loop":
        block = get_block(step["block"])
        sch.add_unit_loop(block if step["loop"] is None else _loop(sch, get_block, step))
    else:
        raise HarnessError(f"unknown step {op}")


def random_inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=s).astype("float32") for s in shapes]


# ------------------------------------------------------------------------------------------
# The TVM side (runs under TVM's Python; no mlckit here).
# ------------------------------------------------------------------------------------------


def tvm_worker(cases_file: str, out_dir: str, skip: int) -> None:
    import tvm
    from tvm.script import tirx as T

    target = tvm.target.Target(TVM_TARGET)
    with open(cases_file) as f:
        cases = json.load(f)
    for case in cases[skip:]:
        res = {"id": case["id"], "outcomes": [], "script": None, "build": None, "out": None}
        try:
            func = tvm.script.from_source(to_tvm_spelling(case["source"]),
                                          extra_vars={"T": T})
            sch = tvm.s_tir.Schedule(func)
            for step in case["steps"]:
                try:
                    apply_step(sch, step, sch.get_sblock)
                    res["outcomes"].append(["ok", ""])
                except HarnessError as err:
                    res["outcomes"].append(["harness", str(err)])
                except Exception as err:  # TVM's refusals: TVMError, and TypeErrors of the API
                    res["outcomes"].append(["rejected", _tvm_message(err)])
            res["script"] = sch.mod.script()
            try:  # does TVM's own parser take what TVM printed?
                tvm.script.from_source(res["script"])
            except Exception as err:
                res["reparse"] = _tvm_message(err)[-600:]
            try:
                ex = tvm.compile(sch.mod, target=target)
                args = [tvm.runtime.tensor(a) for a in random_inputs(case["shapes"], case["id"])]
                ex["main"](*args)
                path = os.path.join(out_dir, f"tvm_{case['id']}.npy")
                np.save(path, np.concatenate([a.numpy().ravel() for a in args]))
                res["out"] = path
            except Exception as err:
                res["build"] = f"{type(err).__name__}: {err}"[:2000]
        except Exception as err:
            res["error"] = f"{type(err).__name__}: {err}"[:2000]
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


def _tvm_message(err) -> str:
    """TVM's error without the IR it prints: the line after "Error message:" if there."""
    text = str(err)
    found = re.search(r"Error message: (.*)", text, re.S)
    if found:
        text = found.group(1)
    return f"{type(err).__name__}: {text.strip()}"[:2000]


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_tvm(cases, tvm_python, work_dir, tag, case_seconds=CASE_SECONDS):
    """Results of TVM for ``cases`` (a list of dicts), restarting the worker after a crash,
    or after a case it spends more than ``case_seconds`` on (TVM 0.27 loops forever on some
    schedules)."""
    path = os.path.join(work_dir, f"cases_{tag}.json")
    with open(path, "w") as f:
        json.dump(cases, f)
    results, skip = {}, 0
    while skip < len(cases):
        proc = subprocess.Popen([tvm_python, os.path.abspath(__file__), "--worker", path,
                                 "--work-dir", work_dir, "--skip", str(skip)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        errors: list = []
        threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
        threading.Thread(target=lambda f=proc.stderr, out=errors: out.append(f.read()),
                         daemon=True).start()
        stuck = False
        while True:
            try:
                line = lines.get(timeout=case_seconds)
            except queue.Empty:
                proc.kill()
                stuck = True
                break
            if line is None:
                break
            if line.startswith("{"):
                res = json.loads(line)
                results[res["id"]] = res
                skip += 1
        proc.wait()
        if (stuck or proc.returncode != 0) and skip < len(cases):
            cid = cases[skip]["id"]
            why = (f"TVM spent more than {case_seconds} s on this case (stopped)" if stuck
                   else "".join(errors)[-2000:])
            results[cid] = {"id": cid, "crashed": why}
            skip += 1
    return results


# ------------------------------------------------------------------------------------------
# The mlckit side, drawing the steps as it goes.
# ------------------------------------------------------------------------------------------


def _block_names(func):
    from mlckit.tir import stmt as S
    from mlckit.tir.schedule.ir_utils import walk

    names = []

    def visit(s):
        if isinstance(s, S.Block) and s.name_hint != "root":
            names.append(s.name_hint)
            walk(s.init, visit)

    walk(func.body, visit)
    return names


def _buffer_names(func):
    from mlckit.tir import stmt as S
    from mlckit.tir.schedule.ir_utils import walk

    names = []

    def visit(s):
        if isinstance(s, S.Block):
            names.extend(b.name for b in s.alloc_buffers or [])
            walk(s.init, visit)

    walk(func.body, visit)
    return names


def _init_nested(func):
    """Names of blocks that sit inside some block's ``T.init()``."""
    from mlckit.tir import stmt as S
    from mlckit.tir.schedule.ir_utils import walk

    names = []

    def visit(s):
        if isinstance(s, S.Block) and s.init is not None:
            walk(s.init, lambda t: names.append(t.name_hint) if isinstance(t, S.Block) else None)

    walk(func.body, visit)
    return names


KINDS = ("split", "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_at",
         "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
         "cache_write", "decompose_reduction", "rfactor", "blockize", "set_scope", "get_block",
         "transform_layout", "transform_layout", "storage_align", "add_unit_loop")


def draw_index_map(r, shape):
    """A lambda's text laying out a buffer of ``shape`` anew: a permutation of its axes, an
    axis split by a factor (the remainder innermost; an extent the factor does not divide
    makes a map both sides should refuse, as it pads), two neighbouring axes fused, or an
    axis reversed (which TVM 0.27 fails on with an internal check)."""
    n = len(shape)
    axes = [f"v{d}" for d in range(n)]
    out = list(axes)
    kind = r.choice(("permute", "pack", "pack", "fuse")) if r.random() > 0.1 else "reverse"
    d = r.randrange(n)
    if kind == "permute":
        r.shuffle(out)
    elif kind == "pack":
        f = r.choice((2, 3, 4, 8))
        out = out[:d] + [f"{axes[d]} // {f}"] + out[d + 1:] + [f"{axes[d]} % {f}"]
    elif kind == "fuse" and d + 1 < n:
        out = out[:d] + [f"{axes[d]} * {shape[d + 1]} + {axes[d + 1]}"] + out[d + 2:]
    elif shape[d] > 1:  # TVM 0.27 gives a reversed axis of extent 1 the extent -1
        out[d] = f"{shape[d] - 1} - {axes[d]}"
    return f"lambda {', '.join(axes)}: ({', '.join(out)},)"


def draw_step(r, sch):
    """A step that is usually legal for mlckit's current schedule."""
    func = sch.mod["main"]
    names = _block_names(func)
    nested = _init_nested(func)
    if not names:
        return None
    kind = r.choice(KINDS)
    plain = [n for n in names if n not in nested] or names
    name = r.choice(names if r.random() < 0.1 else plain)
    try:
        block = sch.get_block(name)
        nloops = len(sch.get_loops(block))
        blk = sch.get(block)
    except Exception:
        return {"op": "get_block", "block": name}
    if kind == "get_block":
        return {"op": "get_block", "block": r.choice(nested or names)}
    if kind in ("split", "fuse", "reorder", "parallel", "vectorize", "unroll",
                "decompose_reduction", "rfactor", "blockize") and nloops == 0:
        return {"op": "get_block", "block": name}
    if kind == "split":
        loop = r.randrange(nloops)
        ext = sch.get(sch.get_loops(block)[loop]).extent
        ext = int(ext.value) if hasattr(ext, "value") else 8
        f = r.choice(sorted({1, 2, 3, 4, max(1, ext // 2), ext}))
        factors = r.choice([[None, f], [f, None], [2, None, f], [None, 2, 2]])
        return {"op": "split", "block": name, "loop": loop, "factors": factors}
    if kind == "fuse":
        start = r.randrange(nloops)
        return {"op": "fuse", "block": name,
                "loops": list(range(start, min(nloops, start + r.randint(1, 3))))}
    if kind == "reorder":
        order = list(range(nloops))
        r.shuffle(order)
        return {"op": "reorder", "block": name, "loops": order[:r.randint(min(2, nloops), nloops)]}
    if kind in ("parallel", "vectorize", "unroll", "decompose_reduction", "blockize"):
        step = {"op": kind, "block": name, "loop": r.randrange(nloops)}
        if kind == "blockize":
            step["preserve"] = r.random() < 0.8
        return step
    if kind == "rfactor":
        return {"op": kind, "block": name, "loop": r.randrange(nloops),
                "factor_axis": r.choice((0, 0, 1))}
    if kind in ("compute_at", "reverse_compute_at"):
        try:
            others = (sch.get_consumers(block) if kind == "compute_at"
                      else sch.get_producers(block))
            others = [sch.get(b).name_hint for b in others]
        except Exception:
            others = []
        if not others or r.random() < 0.1:
            others = names
        target = r.choice(others)
        try:
            n = len(sch.get_loops(sch.get_block(target)))
        except Exception:
            n = 0
        if n == 0:
            return {"op": "get_block", "block": target}
        return {"op": kind, "block": name, "target": target, "loop": r.randrange(n),
                "preserve": r.random() < 0.5}
    if kind in ("compute_inline", "reverse_compute_inline"):
        return {"op": kind, "block": name}
    if kind == "cache_read":
        if not blk.reads:
            return {"op": "get_block", "block": name}
        index = r.randrange(len(blk.reads))
        if r.random() < 0.15:
            index = blk.reads[index].buffer.name  # TVM 0.27 also takes the buffer's name
        return {"op": kind, "block": name, "index": index, "scope": r.choice(SCOPES)}
    if kind in ("cache_write", "set_scope"):
        return {"op": kind, "block": name, "index": r.randrange(max(1, len(blk.writes))),
                "scope": r.choice(SCOPES)}
    if kind == "transform_layout":
        regions = [("read", i, x) for i, x in enumerate(blk.reads)]
        regions += [("write", i, x) for i, x in enumerate(blk.writes)]
        params = {func.buffer_map[p].name for p in func.params}
        # a parameter laid out anew takes its inputs in the new layout: only the kernel's own
        # buffers, so that both sides still run on the inputs drawn for the original shapes
        regions = [x for x in regions if x[2].buffer.shape and x[2].buffer.name not in params]
        if not regions:
            return {"op": "get_block", "block": name}
        side, index, region = r.choice(regions)
        shape = [int(e.value) for e in region.buffer.shape]
        return {"op": kind, "block": name, "buffer": [side, index],
                "map": draw_index_map(r, shape)}
    if kind == "storage_align":
        shaped = [i for i, w in enumerate(blk.writes) if w.buffer.shape]
        if not shaped:
            return {"op": "get_block", "block": name}
        index = r.choice(shaped)
        factor = r.choice((4, 8, 16, 32))
        return {"op": kind, "block": name, "index": index,
                "axis": r.randrange(len(blk.writes[index].buffer.shape)), "factor": factor,
                "offset": r.choice((0, 1, factor - 1))}
    if kind == "add_unit_loop":
        return {"op": kind, "block": name,
                "loop": r.randrange(nloops) if nloops and r.random() < 0.5 else None}
    return {"op": "get_block", "block": name}


def run_mlckit_case(cid, family, source, r, nsteps, target, steps=None):
    """Draw and apply ``nsteps`` steps with mlckit (or apply ``steps``, as recorded in a
    report); build and run the result."""
    import mlckit
    from mlckit import tir
    from mlckit.error import TVMError
    from mlckit.script import from_source

    res = {"id": cid, "family": family, "source": source, "steps": [], "outcomes": []}
    func = from_source(source)
    res["shapes"] = [[int(s.value) for s in func.buffer_map[p].shape] for p in func.params]
    sch = tir.Schedule(func)
    for k in range(nsteps if steps is None else len(steps)):
        try:
            step = draw_step(r, sch) if steps is None else steps[k]
        except Exception as err:
            res["outcomes"].append(["crash", "while drawing: " + _tb(err)])
            res["steps"].append({"op": "get_block", "block": "root"})
            break
        if step is None:
            break
        res["steps"].append(step)
        try:
            apply_step(sch, step, sch.get_block)
            res["outcomes"].append(["ok", ""])
        except HarnessError as err:
            res["outcomes"].append(["harness", str(err)])
        except TVMError as err:
            res["outcomes"].append(["rejected", f"{type(err).__name__}: {err}"[:2000]])
        except Exception as err:
            res["outcomes"].append(["crash", _tb(err)])
    res["mod"] = sch.mod
    try:
        res["script"] = sch.mod.script()
    except Exception as err:
        res["script"] = None
        res["script_crash"] = _tb(err)
    inputs = random_inputs(res["shapes"], cid)
    try:
        ref = [a.copy() for a in inputs]
        mlckit.build(func, target="lnumpy")(*ref)
        res["ref"] = np.concatenate([a.ravel() for a in ref])
        got = [a.copy() for a in inputs]
        try:
            kernel = mlckit.build(sch.mod["main"], target=target)
        except TVMError as err:
            # lnumpy runs a T.vectorized loop lane by lane and refuses one whose lanes depend
            # on each other, naming llvm for TVM's vector result: take that
            if target != "lnumpy" or "T.vectorized" not in str(err):
                raise
            kernel = mlckit.build(sch.mod["main"], target="llvm")
        kernel(*got)
        res["out"] = np.concatenate([a.ravel() for a in got])
    except TVMError as err:
        res["build"] = f"{type(err).__name__}: {err}"[:2000]
    except Exception as err:
        res["build_crash"] = _tb(err)
    return res


def _tb(err):
    frames = traceback.extract_tb(err.__traceback__)[-3:]
    where = "; ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in frames)
    return f"{type(err).__name__}: {err}"[:1500] + f"  [{where}]"


# ------------------------------------------------------------------------------------------
# Comparison.
# ------------------------------------------------------------------------------------------


def compare(m, t):
    """The differences between mlckit's result ``m`` and TVM's ``t`` (a list of dicts)."""
    from mlckit.ir import structural_equal
    from mlckit.script import from_source

    diffs = []
    crashes = [o[1] for o in m["outcomes"] if o[0] == "crash"]
    for key in ("script_crash", "build_crash"):
        if key in m:
            crashes.append(m[key])
    if crashes:
        diffs.append({"kind": "crash", "detail": crashes[0]})
    if "crashed" in t or "error" in t:
        diffs.append({"kind": "tvm_failed", "detail": t.get("crashed") or t.get("error")})
        return diffs
    # whatever TVM does, what mlckit accepted must compute the unscheduled kernel's numbers
    wrong = "out" in m and not np.allclose(m["out"], m["ref"], rtol=1e-3, atol=1e-3)
    if wrong:
        diffs.append({"kind": "numbers", "detail": "mlckit differs from the unscheduled kernel",
                      "max_abs": float(np.max(np.abs(m["out"] - m["ref"])))})
    mo = [o[0] for o in m["outcomes"]]
    to = [o[0] for o in t["outcomes"]]
    for i, (a, b) in enumerate(zip(mo, to)):
        if (a == "ok") != (b == "ok") and a != "crash":
            entry = {"kind": "accept_reject", "step": i, "op": m["steps"][i]["op"],
                     "mlckit": m["outcomes"][i], "tvm": t["outcomes"][i],
                     "diff": _diff(m.get("script"), from_tvm_spelling(t["script"] or ""))}
            if b == "ok" and t.get("build"):
                entry["tvm_build"] = t["build"][:600]
            if b == "ok" and t.get("out") and "ref" in m:
                # where only TVM accepts: are its final numbers right?
                tv = np.load(t["out"])
                entry["tvm_numbers_right"] = bool(tv.shape == m["ref"].shape and np.allclose(
                    tv, m["ref"], rtol=1e-3, atol=1e-3))
            diffs.append(entry)
            return diffs
    if crashes:
        return diffs
    # the final function
    text = from_tvm_spelling(t["script"])
    if t.get("reparse"):
        # TVM's own parser refuses its printout (ill-formed IR), so it is no reference: the
        # case is TVM's fault when mlckit prints the same text, or a well-formed function
        # (its script parses back to it) computing the unscheduled kernel's numbers
        same = _printed(m["script"]) == _printed(text)
        sound = same or _sound(m)
        diffs.append({"kind": "tvm_unparsable" if same or sound else "script",
                      "why": "TVM's parser refuses TVM's script"
                      + ("" if same else "; mlckit's differs") + ": " + t["reparse"],
                      "diff": _diff(m["script"], text)})
        text = None
    try:
        theirs = from_source(text)["main"] if text is not None else None
    except Exception as err:
        # a binding outside its iterator's domain: TVM's kernel goes out of bounds (e.g. the
        # write-back of an rfactor without the guard of an uneven split)
        ill_formed = "outside its domain" in str(err) and _sound(m)
        diffs.append({"kind": "tvm_unparsable" if ill_formed else "script",
                      "why": ("TVM's script is ill-formed, mlckit's sound: " if ill_formed
                              else "mlckit cannot parse TVM's script: ") + f"{err}"[:1500],
                      "diff": _diff(m["script"], text)})
        theirs = None
    if theirs is not None:
        ours = m["mod"]["main"]
        same = structural_equal(ours.without_attr("global_symbol"),
                                theirs.without_attr("global_symbol"), map_free_vars=True)
        # names as printed (the printer makes duplicate names unique on both sides)
        printed = from_source(m["script"])["main"]
        names = (_block_names(printed), _buffer_names(printed)) == (_block_names(theirs),
                                                                    _buffer_names(theirs))
        if not same or not names:
            why = "structure" if not same else "names"
            ours_text = m["script"]
            try:
                theirs_text = from_tvm_spelling(t["script"])
            except Exception:
                theirs_text = text
            diffs.append({"kind": "script", "why": why, "diff": _diff(ours_text, theirs_text)})
    # the numbers
    if t.get("out") and "out" in m:
        tv = np.load(t["out"])
        mlckit_right = bool(np.allclose(m["out"], m["ref"], rtol=1e-3, atol=1e-3))
        if tv.shape != m["out"].shape or not np.allclose(m["out"], tv, rtol=1e-3, atol=1e-3):
            # TVM wrong where mlckit computes the unscheduled kernel's numbers: a TVM bug
            kind = "tvm_wrong" if mlckit_right else "numbers"
            if not mlckit_right:
                diffs = [d for d in diffs if d["kind"] != "numbers"]
            diffs.append({"kind": kind, "detail": "mlckit and TVM differ",
                          "max_abs": float(np.max(np.abs(m["out"] - tv)))
                          if tv.shape == m["out"].shape else None,
                          "tvm_vs_ref": bool(np.allclose(m["ref"], tv, rtol=1e-3, atol=1e-3))})
    elif t.get("out") and "build" in m:
        diffs.append({"kind": "numbers", "detail": "mlckit cannot build what TVM builds: "
                      + m["build"]})
    return diffs


# Where the fault lies, one class a case (the first that applies).
REAL = ("accept_reject", "script", "numbers", "crash", "tvm_failed")
INTERNAL = ("Check failed", "InternalError")


def _tvm_internal(d) -> bool:
    """TVM refused a step with an internal check failure (not a ScheduleError) that mlckit
    takes, or took a step mlckit refuses and then could not build its own result (an
    internal check of its lowering: the IR it made is ill-formed)."""
    msg = d["tvm"][1] if d["tvm"][0] == "rejected" else ""
    if d["mlckit"][0] == "ok":
        return ("ScheduleError" not in msg.split(":")[0]
                and any(k in msg for k in INTERNAL))
    return d["tvm"][0] == "ok" and any(k in d.get("tvm_build", "") for k in INTERNAL)


def _printed(text):
    """A script without its import comments, for comparing printouts."""
    return "\n".join(ln for ln in (text or "").splitlines()
                     if ln.strip() and not ln.startswith("# from tvm"))


def _sound(m) -> bool:
    """mlckit's function is well-formed (its script parses back to it) and computes the
    unscheduled kernel's numbers."""
    from mlckit.ir import structural_equal
    from mlckit.script import from_source

    try:
        back = from_source(m["script"])["main"]
        return structural_equal(back, m["mod"]["main"]) and "out" in m and bool(
            np.allclose(m["out"], m["ref"], rtol=1e-3, atol=1e-3))
    except Exception:
        return False


def classify(diffs) -> str:
    """``agree``; ``tvm_internal``: TVM fails with an internal check where mlckit computes the
    unscheduled kernel's numbers, or takes a step mlckit refuses and cannot build the result;
    ``tvm_wrong``: TVM computes wrong numbers where mlckit refuses or computes the right ones;
    ``tvm_unparsable``: TVM's parser refuses TVM's own printout (or mlckit's refuses it for a
    binding outside its domain), and mlckit prints the same text or a well-formed function
    with the right numbers; else the kind of the real difference."""
    if not diffs:
        return "agree"
    kinds = {d["kind"] for d in diffs}
    if "crash" in kinds or "numbers" in kinds:  # mlckit's own fault, whatever TVM does
        return "crash" if "crash" in kinds else "numbers"
    for d in diffs:
        if d["kind"] == "accept_reject" and _tvm_internal(d):
            return "tvm_internal"
        if d["kind"] == "accept_reject" and d["tvm"][0] == "ok" \
                and d.get("tvm_numbers_right") is False:
            return "tvm_wrong"
    if "tvm_wrong" in kinds:  # TVM's script is no reference where its numbers are wrong
        return "tvm_wrong"
    real = [k for k in REAL if k in kinds]
    return real[0] if real else "tvm_unparsable"


def summary_line(counts) -> str:
    n = sum(counts.values())
    real = sum(counts[k] for k in REAL)
    line = (f"{n} cases: {counts['agree']} agree ({100 * counts['agree'] / n:.1f}%), "
            f"TVM crashes internally (mlckit right) {counts['tvm_internal']}, "
            f"TVM's numbers wrong (mlckit refuses or right) {counts['tvm_wrong']}, "
            f"TVM prints a script its parser refuses {counts['tvm_unparsable']}; "
            f"real differences {real}: accept/reject differs {counts['accept_reject']}, "
            f"script differs {counts['script']}, numbers differ {counts['numbers']}, "
            f"mlckit crashes {counts['crash']}")
    if counts["tvm_failed"]:
        line += f", TVM failed {counts['tvm_failed']}"
    return line


def _diff(a, b):
    return "\n".join(difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(),
                                          "mlckit", "tvm", lineterm="", n=2))[:6000]


def _signature(d, m):
    if d["kind"] == "accept_reject":
        who = "mlckit accepts" if d["mlckit"][0] == "ok" else "TVM accepts"
        msg = d["tvm"][1] if d["mlckit"][0] == "ok" else d["mlckit"][1]
        found = re.search(r"Error message: (.*)", msg or "")
        msg = found.group(1) if found else (msg.splitlines()[0] if msg else "")
        msg = re.sub(r"\d+", "N", msg)[:140]
        wrong = " [TVM's numbers wrong]" if d.get("tvm_numbers_right") is False else ""
        if d["tvm"][0] == "ok" and any(k in d.get("tvm_build", "") for k in INTERNAL):
            wrong = " [TVM cannot build its result]"
        return f"{d['op']}: {who} ({msg}){wrong}"
    if d["kind"] == "crash":
        return "crash: " + re.sub(r"\d+", "N", d["detail"].split("\n")[0])[:160]
    if d["kind"] == "tvm_unparsable":
        found = re.search(r"undefined variable", d["why"])
        why = "a variable used but not defined" if found else d["why"].split(": ", 1)[-1][:60]
        ops = sorted({s["op"] for s, o in zip(m["steps"], m["outcomes"]) if o[0] == "ok"})
        return f"TVM's parser refuses its own script ({why}) after {'+'.join(ops)}"
    if d["kind"] == "script":
        ops = sorted({s["op"] for s, o in zip(m["steps"], m["outcomes"]) if o[0] == "ok"})
        return f"script ({d['why'][:60]}) after {'+'.join(ops)}"
    return f"{d['kind']}: {d.get('detail', '')[:100]}"


# ------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=6, help="at most this many steps a case")
    ap.add_argument("--target", default="lnumpy", help="mlckit's build target (lnumpy, llvm)")
    ap.add_argument("--tvm-python", default="/tmp/tvmenv/bin/python")
    ap.add_argument("--batch", type=int, default=250, help="cases per TVM subprocess")
    ap.add_argument("--report", default="difftest_report", help="writes REPORT.json, .md")
    ap.add_argument("--only", default="", help="comma-separated case ids to run")
    ap.add_argument("--show", action="store_true", help="print steps and scripts of differences")
    ap.add_argument("--replay", help="re-run the differences recorded in this REPORT.json, "
                    "their steps as recorded (with --only: those cases)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--work-dir", help=argparse.SUPPRESS)
    ap.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return tvm_worker(args.worker, args.work_dir, args.skip)

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    only = {int(x) for x in args.only.split(",") if x}
    ids = sorted(only) if only else list(range(args.cases))
    recorded = {}
    if args.replay:
        with open(args.replay) as f:
            recorded = {e["id"]: e for e in json.load(f)["differences"]}
        ids = [cid for cid in sorted(recorded) if not only or cid in only]
    work_dir = tempfile.mkdtemp(prefix="difftest_")
    start = time.time()
    mres, tres = {}, {}
    for b in range(0, len(ids), args.batch):
        batch = []
        for cid in ids[b:b + args.batch]:
            r = random.Random(args.seed * 1_000_003 + cid)
            if cid in recorded:
                e = recorded[cid]
                m = run_mlckit_case(cid, e["family"], e["source"], r, 0, args.target,
                                    steps=e["steps"])
            else:
                family = r.choice(sorted(FAMILIES))
                m = run_mlckit_case(cid, family, FAMILIES[family](r), r,
                                    r.randint(1, args.steps), args.target)
            source = m["source"]
            mres[cid] = m
            batch.append({"id": cid, "source": source, "steps": m["steps"],
                          "shapes": m["shapes"]})
        tres.update(run_tvm(batch, args.tvm_python, work_dir, b))
        print(f"  {len(mres)} cases, {time.time() - start:.0f}s", file=sys.stderr)

    counts = dict.fromkeys(("agree", "tvm_internal", "tvm_wrong", "tvm_unparsable",
                            "accept_reject", "script", "numbers", "crash", "tvm_failed"), 0)
    report = []
    for cid in ids:
        m, t = mres[cid], tres[cid]
        diffs = compare(m, t)
        fault = classify(diffs)
        counts[fault] += 1
        if fault == "agree":
            continue
        entry = {"id": cid, "family": m["family"], "fault": fault, "steps": m["steps"],
                 "mlckit": m["outcomes"], "tvm": t.get("outcomes"), "diffs": diffs,
                 "signatures": [_signature(d, m) for d in diffs],
                 "source": m["source"]}
        report.append(entry)
        if args.show:
            print(json.dumps({k: entry[k] for k in ("id", "family", "fault", "steps",
                                                    "signatures")}))
            for d in diffs:
                print(d.get("diff") or d.get("detail") or "")
    line = summary_line(counts)
    print(line)
    with open(args.report + ".json", "w") as f:
        json.dump({"summary": line, "seed": args.seed, "differences": report}, f, indent=1)
    groups: dict[tuple, list[int]] = {}
    for e in report:
        for s in e["signatures"]:
            groups.setdefault((e["fault"], s), []).append(e["id"])
    titles = {"tvm_internal": "TVM crashes internally (mlckit right)",
              "tvm_wrong": "TVM's numbers wrong (mlckit refuses or right)",
              "tvm_unparsable": "TVM prints a script its parser refuses (mlckit's is the same, "
                                "or well-formed and right)"}
    with open(args.report + ".md", "w") as f:
        title = f"replay of {args.replay}" if args.replay else f"seed {args.seed}"
        f.write(f"# difftest_tvm ({title})\n\n{line}\n")
        for fault in ("accept_reject", "script", "numbers", "crash", "tvm_failed",
                      "tvm_internal", "tvm_wrong", "tvm_unparsable"):
            rows = sorted(((s, c) for (k, s), c in groups.items() if k == fault),
                          key=lambda kv: -len(kv[1]))
            if rows:
                f.write(f"\n## {titles.get(fault, 'real difference: ' + fault)}\n\n")
            for s, cids in rows:
                f.write(f"- **{len(cids)}** {s} — cases {', '.join(map(str, cids[:12]))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
