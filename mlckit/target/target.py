"""``Target``: a target kind (``llvm``, ``cuda`` …) with its attributes, parsed from TVM's
string or dict forms.

``"llvm -mcpu=skylake --num-cores=4"`` reads as kind ``llvm`` with attributes
``{"mcpu": "skylake", "num-cores": 4}``; ``{"kind": "cuda", "arch": "sm_80"}`` is the dict
form.  mlckit compiles ``llvm`` / ``c`` (and its own ``numba``, ``lnumpy``) through Numba;
the other kinds TVM knows can be named, and the build step says whether a backend exists.
"""

from __future__ import annotations

import difflib
import json
import threading
from dataclasses import dataclass

from mlckit.error import TVMValueError

from .tag import TAGS


@dataclass(frozen=True)
class TargetKind:
    """A kind of target: its name, the device it runs on and the attributes it accepts.

    >>> from mlckit.target import Target
    >>> kind = Target("llvm").kind
    >>> kind, kind.name
    (TargetKind('llvm'), 'llvm')
    """

    name: str
    device_type: str
    options: frozenset
    keys: tuple

    def __repr__(self) -> str:
        return f"TargetKind({self.name!r})"

    def __str__(self) -> str:
        return self.name


_COMMON = {"keys", "tag", "device", "model", "libs", "host", "from_device", "target_device_type"}
_CPU = _COMMON | {"mtriple", "mcpu", "mattr", "mfloat-abi", "mabi", "num-cores", "opt-level",
                  "fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz",
                  "fast-math-arcp", "fast-math-contract", "fast-math-reassoc", "cl-opt",
                  "jit", "vector-width", "link-params", "system-lib", "runtime", "constants-byte-alignment"}
_GPU = _COMMON | {"arch", "max_num_threads", "max_threads_per_block", "thread_warp_size",
                  "max_shared_memory_per_block", "registers_per_block", "l2_cache_size_bytes",
                  "mcpu", "mtriple", "mattr", "max_function_args", "supports_float16"}


def _kind(name, device, options, keys):
    return TargetKind(name, device, frozenset(options), tuple(keys))


KINDS: dict[str, TargetKind] = {k.name: k for k in (
    _kind("llvm", "cpu", _CPU, ("cpu",)),
    _kind("c", "cpu", _CPU, ("cpu",)),
    _kind("numba", "cpu", _CPU, ("cpu",)),     # mlckit: Numba's njit (what "llvm" means here)
    _kind("lnumpy", "cpu", _CPU, ("cpu",)),    # mlckit: the checked low-level NumPy twin
    _kind("cuda", "cuda", _GPU, ("cuda", "gpu")),
    _kind("nvptx", "cuda", _GPU, ("cuda", "gpu")),
    _kind("rocm", "rocm", _GPU, ("rocm", "gpu")),
    _kind("opencl", "opencl", _GPU, ("opencl", "gpu")),
    _kind("vulkan", "vulkan", _GPU, ("vulkan", "gpu")),
    _kind("metal", "metal", _GPU, ("metal", "gpu")),
    _kind("webgpu", "webgpu", _GPU, ("webgpu", "gpu")),
)}

# The type of each attribute that is not a string (TVM's option types): values are checked.
_INT = {"num-cores", "opt-level", "vector-width", "max_num_threads", "max_threads_per_block",
        "thread_warp_size", "max_shared_memory_per_block", "registers_per_block",
        "l2_cache_size_bytes", "max_function_args", "from_device", "target_device_type",
        "constants-byte-alignment"}
_BOOL = {"fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz", "fast-math-arcp",
         "fast-math-contract", "fast-math-reassoc", "link-params", "system-lib",
         "supports_float16"}
_LIST = {"keys", "libs", "mattr", "cl-opt"}

_SCOPE = threading.local()


def list_kinds() -> list[str]:
    """The target kind names mlckit knows (``tvm.target.Target.list_kinds()``).

    >>> from mlckit import target
    >>> {"llvm", "cuda", "c"} <= set(target.list_kinds())
    True
    """
    return sorted(KINDS)


def _type_name(key: str) -> str:
    if key in _INT:
        return "an integer"
    if key in _BOOL:
        return "a boolean (true/false)"
    if key in _LIST:
        return "a list of strings"
    return "a string"


def _from_text(key: str, text: str):
    """The value of ``-key=text`` in a target string, as the attribute's type reads it."""
    if key in _INT:
        try:
            return int(text)
        except ValueError:
            return text  # refused by _check, which names the attribute and its type
    if key in _BOOL:
        return {"true": True, "1": True, "false": False, "0": False}.get(text.lower(), text)
    if key in _LIST:
        return [part for part in text.split(",") if part]
    return text


def _check(key: str, value):
    """``value`` as attribute ``key`` holds it, or None when its type is wrong."""
    if key in _INT:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if key in _BOOL:
        if isinstance(value, bool) or value in (0, 1) and isinstance(value, int):
            return bool(value)
        return None
    if key in _LIST:
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        return None
    return value if isinstance(value, str) else None


def _unknown_kind(name: str, given) -> TVMValueError:
    close = difflib.get_close_matches(name, list(KINDS) + list(TAGS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return TVMValueError(f"Target({given!r}): unknown target kind {name!r}{hint}; known kinds: "
                         f"{', '.join(list_kinds())}")


def list_tags() -> dict:
    """The tags mlckit knows, each with its target (``tvm.target.list_tags()``).

    Example::

        list_tags()["nvidia/geforce-rtx-3090"].arch      # 'sm_86'
    """
    return {name: Target(name) for name in sorted(TAGS)}


def register_tag(name: str, config: dict, override: bool = False) -> Target:
    """Make ``name`` a tag for the target dict ``config``; returns its target
    (``tvm.target.register_tag``).

    Example::

        register_tag("my/laptop-gpu", {"kind": "cuda", "arch": "sm_86"})
    """
    if name in TAGS and not override:
        raise TVMValueError(f"register_tag: the tag {name!r} exists; pass override=True to "
                            "replace it")
    target = Target(config)  # checks the config before the table changes
    TAGS[name] = dict(config)
    return target


class Target:
    """A compilation target, as ``tvm.target.Target``.

    Example::

        Target("llvm")                          # kind llvm, no attributes
        Target("llvm --num-cores=1").attrs      # {'num-cores': 1}
        Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
        Target("nvidia/tesla-p100").kind.name   # 'cuda' (a tag)
    """

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            self.kind, self.attrs, self.tag = target.kind, dict(target.attrs), target.tag
            host = host if host is not None else target.host
        elif isinstance(target, dict):
            self._from_dict(target, target)
        elif isinstance(target, str) and target.lstrip().startswith("{"):
            self._from_json(target)
        elif isinstance(target, str):
            self._from_string(target)
        else:
            raise TVMValueError(f"Target: expected a string, a dict or a Target, got "
                                f"{type(target).__name__} {target!r}")
        if "host" in self.attrs and host is None:
            host = self.attrs.pop("host")
        self.host = None if host is None else Target(host)

    def _from_json(self, text: str) -> None:
        try:
            config = json.loads(text)
        except json.JSONDecodeError as err:
            raise TVMValueError(f"Target({text!r}): cannot read the JSON target: {err.msg} at "
                                f"line {err.lineno} column {err.colno}") from None
        if not isinstance(config, dict):
            raise TVMValueError(f"Target({text!r}): a JSON target is an object "
                                '(e.g. {"kind": "llvm"})')
        self._from_dict(config, text)

    def _from_string(self, text: str) -> None:
        words = text.split()
        if not words:
            raise TVMValueError("Target(''): a target string needs a kind, e.g. 'llvm' or 'cuda'")
        name, options = words[0], words[1:]
        if name in TAGS:
            self._from_dict(TAGS[name], text)
            self.tag = name
        elif name in KINDS:
            self.kind, self.attrs, self.tag = KINDS[name], {}, ""
        else:
            raise _unknown_kind(name, text)
        for word in options:
            if not word.startswith("-") or word.strip("-") == "":
                raise TVMValueError(f"Target({text!r}): cannot read {word!r}; options are "
                                    "written -key=value (or --key=value)")
            key, _, value = word.lstrip("-").partition("=")
            self._set(key, _from_text(key, value) if value else True, text)

    def _from_dict(self, config: dict, given) -> None:
        config = dict(config)
        tag = config.get("tag", "")
        if "kind" not in config and tag in TAGS:  # {"tag": "nvidia/..."}: the tag's target
            config = {**TAGS[tag], **config}
        if "kind" not in config:
            raise TVMValueError(f"Target({given!r}): a target dict needs a 'kind' entry")
        name = config["kind"]
        if not isinstance(name, str) or name not in KINDS:
            raise _unknown_kind(str(name), given)
        self.kind, self.attrs, self.tag = KINDS[name], {}, tag
        for key, value in config.items():
            if key not in ("kind", "tag"):
                self._set(key, value, given)

    def _set(self, key: str, value, given) -> None:
        if key not in self.kind.options:
            close = difflib.get_close_matches(key, sorted(self.kind.options), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TVMValueError(f"Target({given!r}): target kind {self.kind.name!r} has no "
                                f"attribute {key!r}{hint}")
        if key == "host":
            self.attrs[key] = value
            return
        checked = _check(key, value)
        if checked is None:
            raise TVMValueError(f"Target({given!r}): attribute {key!r} of target kind "
                                f"{self.kind.name!r} is {_type_name(key)}, got {value!r}")
        self.attrs[key] = checked

    # -- TVM's API -------------------------------------------------------------------
    @property
    def keys(self) -> tuple:
        return tuple(self.attrs.get("keys", self.kind.keys))

    @property
    def mcpu(self) -> str:
        return str(self.attrs.get("mcpu", ""))

    @property
    def arch(self) -> str:
        return str(self.attrs.get("arch", ""))

    @property
    def max_num_threads(self) -> int:
        return int(self.attrs.get("max_num_threads", self.attrs.get("max_threads_per_block", 1024)))

    @property
    def thread_warp_size(self) -> int:
        return int(self.attrs.get("thread_warp_size", 32))

    def export(self) -> dict:
        """The dict form (``Target(t.export())`` gives the same target)."""
        out = {"kind": self.kind.name, **self.attrs}
        if self.tag:
            out["tag"] = self.tag
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    def with_host(self, host) -> Target:
        return Target(self, host=host)

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The target of the innermost ``with target:`` (None outside one)."""
        stack = getattr(_SCOPE, "stack", [])
        if stack:
            return stack[-1]
        if not allow_none:
            raise TVMValueError("Target.current(): no target is in scope (use `with target:`)")
        return None

    list_kinds = staticmethod(list_kinds)

    @staticmethod
    def from_device(device) -> Target:
        """The target of ``device`` (a Device such as ``tvm.cuda(0)``, or ``"cpu"`` /
        ``"cuda"``) present on this machine; a TVMError when it is not there.

        Example::

            target = tvm.target.Target.from_device(tvm.cpu())    # llvm -mcpu=<this CPU>
        """
        from .detect import detect_target_from_device

        return Target(detect_target_from_device(device))

    def __enter__(self) -> Target:
        if not hasattr(_SCOPE, "stack"):
            _SCOPE.stack = []
        _SCOPE.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _SCOPE.stack.pop()

    def __str__(self) -> str:
        def option(key, value):
            if value is True:
                return f"-{key}"
            return f"-{key}={','.join(value) if isinstance(value, list) else value}"

        return " ".join([self.kind.name] + [option(k, v) for k, v in self.attrs.items()])

    def __repr__(self) -> str:
        return f"Target({str(self)!r}" + (f", host={str(self.host)!r})" if self.host else ")")

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = Target(other)
        return isinstance(other, Target) and self.export() == other.export()

    def __hash__(self) -> int:
        return hash(str(self))
