"""The plan cache: descriptors of one-shot calls, kept for the next call with the same layout.

A one-shot call (relu(x), softmax_(out, x), ...) costs a descriptor's create, its plan
and its workspace, and then its destroy. The cache keeps the PreparedOp of each layout
seen lately (key: operator, parameters, backend, variant, and every operand's array
library, dtype, shape, strides and device, plus the stream it runs on for GPU arrays),
so that a repeated call only describes its arrays and runs. Entries keep no array alive.

Thread-safe: a call takes its entry out of the cache and gives it back after the run,
so an entry (its workspace) is never used by two calls at once; a second thread with
the same key meanwhile makes its own, and the cache keeps one of them. Bounded: the
least recently used entries beyond CAPACITY are destroyed. Cleared at interpreter
exit, and forgotten (never destroyed) in a forked child.
"""

import atexit
import os
import threading
from collections import OrderedDict

CAPACITY = 64

_lock = threading.Lock()
_entries = OrderedDict()


def take(key):
    """The cached PreparedOp for `key`, removed from the cache (give it back after use)."""
    with _lock:
        return _entries.pop(key, None)


def give(key, prepared):
    """Puts `prepared` back as the most recent entry for `key`; destroys what is dropped."""
    dropped = []
    with _lock:
        if key in _entries:  # another thread made one meanwhile: keep that one
            dropped.append(prepared)
        else:
            _entries[key] = prepared
            while len(_entries) > CAPACITY:
                dropped.append(_entries.popitem(last=False)[1])
    for p in dropped:
        p.destroy()


def clear():
    """Destroys every cached descriptor."""
    with _lock:
        entries = list(_entries.values())
        _entries.clear()
    for p in entries:
        p.destroy()


def size():
    with _lock:
        return len(_entries)


def _forget_in_child():
    # The parent's descriptors (and a GPU backend's state) are not this process's to free:
    # keep them referenced, unused, and start empty.
    global _lock, _entries
    _forgotten.append(_entries)
    _lock, _entries = threading.Lock(), OrderedDict()


_forgotten = []
atexit.register(clear)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
