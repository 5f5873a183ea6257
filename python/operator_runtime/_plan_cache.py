"""The plan cache: descriptors of one-shot calls, kept for the next call with the same layout.

A one-shot call (relu(x), softmax_(out, x), ...) costs a descriptor's create, its plan
and its workspace, and then its destroy. The cache keeps an Entry (a PreparedOp and what
its call needs) for each layout seen lately (key: operator, parameters, backend, variant,
and every operand's array library, dtype, shape, strides and device, plus the stream it
runs on for GPU arrays), so that a repeated call only reads its arrays' data pointers and
runs. Entries keep no array alive.

Thread-safe: a call uses an entry only while it holds the entry's lock (`busy`: the
compiled module's Slot, which its hit path takes without a call, or a threading.Lock
without the module; _native.py), taken without waiting, so an entry (its workspace) is
never used by two calls at once; a second thread with the same key meanwhile makes its
own, and the cache keeps one of them. A hit takes no cache-wide lock: one dict lookup,
the entry's lock, and a flag set.

Bounded: beyond CAPACITY entries, the oldest entry not hit since it was cached or since
the last sweep is destroyed (the CLOCK approximation of least-recently-used: a hit sets
the entry's `used` flag; a sweep gives a used entry a second chance at the back, clearing
the flag), so that a layout called again and again stays among many seen once. Cleared at
interpreter exit, and forgotten (never destroyed) in a forked child.
"""

import atexit
import os
import threading

from . import _native

CAPACITY = 64

_lock = threading.Lock()  # guards changes of _entries (inserts, evictions, clear)
_entries = {}  # key -> Entry, oldest first


class Entry:
    """A cached plan: subclasses hold what a call runs and free it in close()."""

    __slots__ = ("busy", "used", "alive")

    def __init__(self):
        self.busy = _native.new_lock()  # held by the one call using the entry
        self.used = False  # set by each hit, cleared by a sweep
        self.alive = True

    def close(self):
        """Frees what the entry holds (called once, with `busy` held)."""

    def destroy(self):
        """Waits for the call using the entry, if any, then frees it."""
        with self.busy:
            if self.alive:
                self.alive = False
                self.close()


def acquire(key):
    """The entry for `key`, locked for the caller (release() it after the run), or None
    when there is none or another thread is using it."""
    try:
        entry = _entries.get(key)
    except TypeError:  # an unhashable part (an odd array-like's attribute): never cached
        return None
    if entry is None or not entry.busy.acquire(False):
        return None
    if not entry.alive:  # evicted and destroyed between the lookup and the lock
        entry.busy.release()
        return None
    entry.used = True
    return entry


def release(entry):
    entry.busy.release()


def add(key, entry):
    """Caches a new `entry` (not locked) for `key`, unless another thread cached one
    meanwhile or the key cannot be hashed (then `entry` is destroyed); destroys what the
    bound evicts."""
    dropped = []
    with _lock:
        try:
            known = key in _entries
        except TypeError:  # unhashable: not cached
            known = True
        if known:
            dropped.append(entry)
        else:
            _entries[key] = entry
            while len(_entries) > CAPACITY:
                oldest = next(iter(_entries))
                e = _entries.pop(oldest)
                if e.used:  # a second chance, at the back
                    e.used = False
                    _entries[oldest] = e
                else:
                    dropped.append(e)
    for e in dropped:  # outside _lock: destroy() may wait for a call using the entry
        e.destroy()


def clear():
    """Destroys every cached entry."""
    with _lock:
        entries = list(_entries.values())
        _entries.clear()
    for e in entries:
        e.destroy()


def size():
    return len(_entries)


def _forget_in_child():
    # The parent's descriptors (and a GPU backend's state) are not this process's to free:
    # keep them referenced, unused, and start empty.
    global _lock, _entries
    _forgotten.append(_entries)
    _lock, _entries = threading.Lock(), {}


_forgotten = []
atexit.register(clear)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
