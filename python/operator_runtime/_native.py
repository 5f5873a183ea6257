"""The compiled hit path of one-shot calls: the extension module operator_runtime._fastcall
(python/native/fastcall.c), when it was built.

With it, a one-shot call on a layout seen before (relu(x), softmax_(out, x), ...) is one C
call: the operator function hands its raw arguments to its Op's call(), which builds the
plan cache key in C, finds the plan's Slot and runs it (or returns None: the Python path
then runs as it does without the module, and registers its plan with the Op). A prepared op
on host arrays has a Slot of its own: its run is the Slot's run, one C call. Without the
module (no Python headers when the library was built, another Python version, an import
error) every call takes that Python path: fast_call_info() says which path is in use, and
why.

The module is looked for where the library is (_lib's search order): inside the package
(pip install), then in $CAMP_BUILD_DIR or the checkout's build-*/ folders; only a file built
for this interpreter (importlib.machinery.EXTENSION_SUFFIXES) is loaded.
"""

import importlib.machinery
import importlib.util
import os
import sys
import threading

from . import _lib

MODULE = "operator_runtime._fastcall"
INTERFACE = 6  # fastcall.c's INTERFACE: a module built from another version is not used

module = None  # the extension module, or None
path = None  # where it was loaded from
reason = None  # why it is not in use (None when it is)
_ops = {}  # operator name -> its Op (one key table each)


def _find():
    """(module, path, reason)."""
    if MODULE in sys.modules and sys.modules[MODULE] is None:  # blocked (tests of the fallback)
        return None, None, f"{MODULE} is blocked (sys.modules[{MODULE!r}] is None)"
    looked = []
    for lib_path in _lib._search_paths(None):
        folder = lib_path.parent
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = folder / f"_fastcall{suffix}"
            looked.append(str(candidate))
            if not candidate.is_file():
                continue
            try:
                spec = importlib.util.spec_from_file_location(MODULE, candidate)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            except Exception as exc:  # noqa: BLE001 (any failure: the ctypes path, and why)
                return None, None, f"{candidate} failed to load: {type(exc).__name__}: {exc}"
            if getattr(mod, "INTERFACE", None) != INTERFACE:
                return None, None, (f"{candidate} was built from another version (interface "
                                    f"{getattr(mod, 'INTERFACE', None)}, this package's is "
                                    f"{INTERFACE}): rebuild it")
            sys.modules[MODULE] = mod
            return mod, candidate, None
    folders = sorted({os.path.dirname(p) for p in looked})
    return None, None, (f"no _fastcall module for this Python ({sys.implementation.cache_tag}) "
                        f"in {', '.join(folders) or 'any library folder'}: it is built with "
                        f"libcamp_ops.so when CMake finds Python's development headers "
                        f"(Debian: python3-dev)")


def _load():
    global module, path, reason
    module, path, reason = _find()


def op(name):
    """The Op of operator `name` (its C key table and hit path), or None without the module."""
    if module is None:
        return None
    fast = _ops.get(name)
    if fast is None:
        num_inputs, _ = _lib.OP_SIGNATURES[name]
        fast = _ops.setdefault(name, module.Op(num_inputs))
    return fast


def new_lock():
    """A plan cache entry's lock: the module's Slot (a lock the C hit path can read and
    take without a call) or, without the module, a threading.Lock."""
    return module.Slot() if module is not None else threading.Lock()


def fast_call_info():
    """{"compiled": whether one-shot calls hit the plan cache in C, "path": the module's
    file or None, "reason": why not, or None}."""
    return {"compiled": module is not None, "path": str(path) if path else None,
            "reason": reason}


def set_enabled(enabled):
    """Test helper: with False every C lookup misses (the Python path runs, as without the
    module); the plan cache is emptied either way. A process without the module stays
    without it."""
    from . import _plan_cache

    _plan_cache.clear()
    for fast in _ops.values():
        fast.enabled = enabled


def _forget_in_child():
    # The tables point at the parent's plans, which the child never runs (_plan_cache).
    for fast in _ops.values():
        fast.forget()


_load()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
