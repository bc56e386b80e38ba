"""Target tags: a named device stands for a target of a kind with its limits filled in
(``Target("nvidia/geforce-rtx-3090")`` is a ``cuda`` target with ``arch="sm_86"`` …).

The table holds the tags TVM's tutorials and the MLC course use and the common devices
learners have; the values are TVM 0.27's.  ``mlckit.target.register_tag`` adds more.

Example::

    from mlckit.target import Target, list_tags
    Target("nvidia/nvidia-a100").arch          # 'sm_80'
    list_tags()["apple/m2-gpu"].kind.name      # 'metal'
"""

from __future__ import annotations


def _nvidia(arch: str, **more) -> dict:
    return {"kind": "cuda", "arch": arch, "max_num_threads": 1024, "registers_per_block": 65536,
            "thread_warp_size": 32, "max_shared_memory_per_block": 49152,
            "max_threads_per_block": 1024, **more}


def _apple() -> dict:
    return {"kind": "metal", "max_num_threads": 256, "max_threads_per_block": 1024,
            "max_shared_memory_per_block": 32768, "thread_warp_size": 32,
            "max_function_args": 31}


TAGS: dict[str, dict] = {
    "nvidia/tesla-p100": _nvidia("sm_60"),
    "nvidia/nvidia-v100": _nvidia("sm_70"),
    "nvidia/nvidia-t4": _nvidia("sm_75"),
    "nvidia/geforce-rtx-2080-ti": _nvidia("sm_75"),
    "nvidia/nvidia-a100": _nvidia("sm_80", l2_cache_size_bytes=41943040),
    "nvidia/nvidia-a10g": _nvidia("sm_86"),
    "nvidia/geforce-rtx-3070": _nvidia("sm_86"),
    "nvidia/geforce-rtx-3080": _nvidia("sm_86"),
    "nvidia/geforce-rtx-3090": _nvidia("sm_86"),
    "nvidia/geforce-rtx-3090-ti": _nvidia("sm_86"),
    "nvidia/jetson-orin-nano": _nvidia("sm_87"),
    "nvidia/geforce-rtx-4090": _nvidia("sm_89", l2_cache_size_bytes=75497472),
    "nvidia/nvidia-h100": _nvidia("sm_90a", l2_cache_size_bytes=52428800),
    "apple/m1-gpu": _apple(),
    "apple/m2-gpu": _apple(),
}
