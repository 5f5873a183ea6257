/* operator_runtime._fastcall: the plan cache's hit path in C.
 *
 * A one-shot call (relu(x), softmax_(out, x), ...) on arrays of a layout seen before runs a
 * cached descriptor (the Python plan cache, _plan_cache.py). In Python that hit costs a few
 * microseconds of attribute reads, tuple building and a ctypes call; here it is one C call:
 *
 *   Op.call(out, in1[, in2], param, backend, variant) -> the output, or None on a miss
 *
 * 1. Key: the bytes of everything the descriptor depends on, read from the arguments as the
 *    call passed them: backend and variant names, the raw parameter (a float by its bits, an
 *    int, or None), "new output" or the given output, then per array its library, dtype,
 *    shape, strides and device, and for CUDA tensors their device's current stream. numpy arrays are
 *    read through the buffer protocol, torch tensors through DLPack's C exchange table where
 *    torch has one (else their attributes and methods) and is_neg();
 *    the fields are those of the Python key (_fast_path.py's docstring says why each one
 *    matters). Anything else, or anything unusual (a subclass, a read-only output, a
 *    tensor with the negative bit), is a miss.
 * 2. Lookup in the Op's hash table (key -> Slot). A Slot is the lock of one Python plan
 *    (_Plan.busy) and holds what its C call needs: the execute function's address, the
 *    descriptor, the workspace. The Python plan owns it; destroying the plan detaches it.
 * 3. Run: take the Slot (its busy flag, under the GIL: a Slot in use by another thread is a
 *    miss, as in Python), allocate a new output when out is None (numpy.empty or
 *    torch.empty_like, called like Python would), release the GIL, call execute, take
 *    the GIL back, free the Slot. A nonzero status is raised by the library's own check()
 *    (the same exception as the Python path).
 * On a miss the Python path runs as before, and registers its plan here (Op.register)
 * with the key of this call's arguments, so that the next call with that layout hits.
 *
 * A prepared op on host arrays (PreparedOp.run(), _prepared.py) has a Slot of its own,
 * armed and bound to its arrays' data pointers once: its run is the Slot's run, one C
 * function from the caller's call to the library's (its Python path, for a run the Slot
 * cannot take, through fallback()).
 *
 * No numpy or torch headers: only the buffer protocol, attribute reads and calls of
 * Python callables handed over by Python (bind_numpy, bind_torch). Written against the
 * stable ABI of Python 3.12 (Py_LIMITED_API; the functions it uses exist in the full API
 * since 3.9), so that one build serves every Python from 3.12 on.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <sched.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000 /* Python 3.9 */
static inline PyObject *Py_NewRef(PyObject *o) {
    Py_INCREF(o);
    return o;
}
static int PyModule_AddObjectRef(PyObject *m, const char *name, PyObject *o) {
    Py_INCREF(o);
    if (PyModule_AddObject(m, name, o) < 0) {
        Py_DECREF(o);
        return -1;
    }
    return 0;
}
#endif

#if defined(Py_GIL_DISABLED)
#error "the busy flags below rely on the GIL: build without free threading"
#endif

enum {
    INTERFACE = 6,      /* what _native.py expects; raised with any change of the calls below */
    MAX_DIMS = 8,       /* oprt_tensor_view_t */
    MAX_INPUTS = 2,     /* vector_add, matmul */
    KEY_BYTES = 1024,   /* room for 3 arrays of 8 dims and the names */
    BUCKETS = 64,       /* per Op; a chain per bucket (the cache holds at most 64 plans) */
    KEYS_PER_SLOT = 4,  /* keys that reach one plan: relu(x, 0) and relu(x, 0.0), ... */
};

/* ---- what Python hands over once ------------------------------------------------------ */

static PyObject *ndarray_type;      /* numpy.ndarray (exact class only) */
static PyObject *tensor_type;       /* torch.Tensor (exact class only) */
static PyObject *cuda_get_stream;   /* torch._C._cuda_getCurrentRawStream(int) -> int, or NULL */
static PyObject *dlpack_capsule;    /* torch.Tensor.__dlpack_c_exchange_api__ (kept alive), or NULL */
/* Interned attribute and method names. */
static PyObject *s_used, *s_dtype, *s_shape, *s_stride, *s_is_neg, *s_is_cuda,
    *s_is_cpu, *s_get_device, *s_data_ptr, *s_requires_grad;

/* ---- DLPack's C exchange table (dlpack.h 1.x, declared here: no header needed) ----------
 * Recent torch releases (2.11 has it) publish it as torch.Tensor.__dlpack_c_exchange_api__,
 * a capsule named "dlpack_exchange_api". Its dltensor_from_py_object_no_sync fills a DLTensor
 * (data, device, dtype, shape, strides) from a tensor in one C call, where the attribute
 * reads below take seven calls into Python. Only that entry is used. */
typedef struct {
    uint32_t major, minor;
} DLPackVersion;
typedef struct {
    int32_t device_type, device_id; /* kDLCPU 1, kDLCUDA 2 */
} DLDevice;
typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides; /* strides in elements */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLPackExchangeAPIHeader {
    DLPackVersion version;
    struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;
typedef struct {
    DLPackExchangeAPIHeader header;
    void *managed_tensor_allocator, *managed_tensor_from_py_object_no_sync,
        *managed_tensor_to_py_object_no_sync;
    int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out); /* 0, or -1 and a
                                                                          * Python error */
    void *current_work_stream;
} DLPackExchangeAPI;
enum { kDLCPU = 1, kDLCUDA = 2 };
static int (*dltensor_from_py)(void *, DLTensor *); /* from dlpack_capsule's table, or NULL */

/* ---- the key -------------------------------------------------------------------------- */

typedef struct {
    unsigned char bytes[KEY_BYTES];
    size_t len;
    int full; /* the key did not fit: a miss */
} Key;

static void key_put(Key *k, const void *data, size_t n) {
    if (k->full || k->len + n > KEY_BYTES) {
        k->full = 1;
        return;
    }
    memcpy(k->bytes + k->len, data, n);
    k->len += n;
}

static void key_i64(Key *k, int64_t v) { key_put(k, &v, sizeof v); }

/* A str by its UTF-8 bytes and length (so "ab"+"c" and "a"+"bc" differ); 0 if not a str. */
static int key_str(Key *k, PyObject *s) {
    if (!PyUnicode_CheckExact(s))
        return 0;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(s, &n);
    if (utf8 == NULL) {
        PyErr_Clear();
        return 0;
    }
    key_i64(k, n);
    key_put(k, utf8, (size_t)n);
    return 1;
}

/* Hash of the key, 8 bytes at a time (a multiply-xorshift mix). */
static uint64_t key_hash(const Key *k) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ k->len;
    size_t i = 0;
    for (; i + 8 <= k->len; i += 8) {
        uint64_t w;
        memcpy(&w, k->bytes + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, k->bytes + i, k->len - i);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

/* What a call passes to execute for one array argument, read with its key. */
typedef struct {
    void *data;
} Read;

enum { KIND_NUMPY = 1, KIND_TORCH = 2 };

/* Reads a numpy array into the key through the buffer protocol: dtype (the buffer format
 * string and item size), shape and byte strides. `writable`: the array is an output (a
 * read-only one is a miss: the Python path refuses it). Returns 1, or 0 for a miss. */
static int read_numpy(Key *k, PyObject *a, int writable, Read *r) {
    Py_buffer view;
    if (PyObject_GetBuffer(a, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear(); /* e.g. bfloat16, which numpy cannot describe in a buffer format */
        return 0;
    }
    int ok = !(writable && view.readonly) && view.ndim <= MAX_DIMS && view.format != NULL;
    if (ok) {
        size_t flen = strlen(view.format);
        key_i64(k, KIND_NUMPY);
        key_i64(k, (int64_t)flen);
        key_put(k, view.format, flen);
        key_i64(k, view.itemsize);
        key_i64(k, view.ndim);
        for (int d = 0; d < view.ndim; ++d) {
            key_i64(k, view.shape[d]);
            key_i64(k, view.strides[d]);
        }
        r->data = view.buf;
    }
    PyBuffer_Release(&view);
    return ok;
}

/* f(arg) (PyObject_CallOneArg is not in the stable ABI). */
static PyObject *call1(PyObject *f, PyObject *arg) {
    PyObject *stack[2] = {NULL, arg};
    return PyObject_Vectorcall(f, stack + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static PyObject *call_method0(PyObject *self, PyObject *name) {
    PyObject *stack[2] = {NULL, self}; /* stack[0]: room for the callee (ARGUMENTS_OFFSET) */
    return PyObject_VectorcallMethod(name, stack + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

/* Appends a tuple of ints (torch.Size, stride()) to the key; 0 if it is not one. */
static int key_int_tuple(Key *k, PyObject *t) {
    if (t == NULL || !PyTuple_Check(t))
        return 0;
    Py_ssize_t n = PyTuple_Size(t);
    if (n > MAX_DIMS)
        return 0;
    key_i64(k, n);
    for (Py_ssize_t i = 0; i < n; ++i) {
        long long v = PyLong_AsLongLong(PyTuple_GetItem(t, i));
        if (v == -1 && PyErr_Occurred())
            return 0;
        key_i64(k, v);
    }
    return 1;
}

/* Truth of an attribute or method result (a new reference, consumed); -1 on error. */
static int truth(PyObject *v) {
    if (v == NULL)
        return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

/* Whether a tensor's memory may be read as it is: no negative bit (the Python path resolves
 * it into a copy) and, for an output, no requires_grad (the Python path refuses it). 0 on an
 * error too (cleared): a miss. */
static int torch_plain(PyObject *t, int output) {
    const int ok = truth(call_method0(t, s_is_neg)) == 0
                   && !(output && truth(PyObject_GetAttr(t, s_requires_grad)) != 0);
    if (!ok)
        PyErr_Clear();
    return ok;
}

/* Reads a torch tensor into the key through its attributes: dtype (torch's dtype objects
 * are singletons), shape, element strides, device (-1: the CPU, else the CUDA index).
 * Strided layout only (the other layouts, sparse, nested, mkldnn, have no strides:
 * stride() raises). *device receives the device. */
static int read_torch_attributes(Key *k, PyObject *t, int output, Read *r, long *device) {
    int ok = 0;
    PyObject *dtype = NULL, *shape = NULL, *stride = NULL, *ptr = NULL;
    dtype = PyObject_GetAttr(t, s_dtype);
    shape = PyObject_GetAttr(t, s_shape);
    stride = call_method0(t, s_stride);
    if (dtype == NULL || shape == NULL || stride == NULL || !torch_plain(t, output))
        goto done;
    int cuda = truth(PyObject_GetAttr(t, s_is_cuda));
    if (cuda < 0)
        goto done;
    if (cuda) {
        PyObject *dev = call_method0(t, s_get_device);
        if (dev == NULL)
            goto done;
        *device = PyLong_AsLong(dev);
        Py_DECREF(dev);
        if (*device < 0)
            goto done;
    } else {
        if (truth(PyObject_GetAttr(t, s_is_cpu)) != 1) /* meta, mps, ...: the slow path */
            goto done;
        *device = -1;
    }
    ptr = call_method0(t, s_data_ptr);
    if (ptr == NULL)
        goto done;
    r->data = PyLong_AsVoidPtr(ptr);
    if (PyErr_Occurred())
        goto done;
    key_i64(k, KIND_TORCH);
    key_i64(k, (int64_t)(intptr_t)dtype);
    key_i64(k, *device);
    ok = key_int_tuple(k, shape) && key_int_tuple(k, stride);
done:
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(stride);
    Py_XDECREF(ptr);
    if (!ok)
        PyErr_Clear();
    return ok;
}

/* The same key fields through DLPack's exchange table, from one C call, then the two that
 * DLPack does not carry (torch_plain).
 * Layouts without strided storage (sparse, mkldnn, nested), quantized dtypes and devices
 * other than the CPU and CUDA fail the export or the device check: a miss. */
static int read_torch_dlpack(Key *k, PyObject *t, int output, Read *r, long *device) {
    DLTensor dl;
    if (dltensor_from_py(t, &dl) != 0) {
        PyErr_Clear();
        return 0;
    }
    if (dl.ndim > MAX_DIMS || dl.dtype.lanes != 1 || (dl.ndim > 0 && dl.strides == NULL))
        return 0;
    if (dl.device.device_type == kDLCUDA && dl.device.device_id >= 0)
        *device = dl.device.device_id;
    else if (dl.device.device_type == kDLCPU)
        *device = -1;
    else
        return 0;
    if (!torch_plain(t, output))
        return 0;
    r->data = (char *)dl.data + dl.byte_offset;
    key_i64(k, KIND_TORCH);
    key_i64(k, (int64_t)dl.dtype.code << 8 | dl.dtype.bits);
    key_i64(k, *device);
    key_i64(k, dl.ndim);
    for (int d = 0; d < dl.ndim; ++d)
        key_i64(k, dl.shape[d]);
    key_i64(k, dl.ndim);
    for (int d = 0; d < dl.ndim; ++d)
        key_i64(k, dl.strides[d]);
    return 1;
}

/* A torch tensor into the key (see the two readers); an output must not require grad. */
static int read_torch(Key *k, PyObject *t, int output, Read *r, long *device) {
    return dltensor_from_py != NULL ? read_torch_dlpack(k, t, output, r, device)
                                    : read_torch_attributes(k, t, output, r, device);
}

/* ---- Slot: one plan's lock and C call -------------------------------------------------- */

struct Op;

/* A new output (a key whose out is None): new_fn([src,] *new_args) where the last
 * len(new_kwnames) items of new_args are keyword values; e.g. numpy.empty(shape, dtype),
 * torch.empty_like(src). new_kind: how to read its data pointer. */
typedef struct {
    PyObject *fn, *args, *kwnames; /* kwnames: a tuple or NULL */
    int takes_src, kind;
} Recipe;

/* One key of an Op's table, and the Slot it reaches. */
typedef struct Node {
    struct Node *next;
    uint64_t hash;
    struct Slot *slot;
    Recipe recipe; /* fn NULL: the key has its output given */
    size_t len;
    unsigned char key[];
} Node;

/* oprt_execute_<op>(descriptor, workspace, workspace_size, out, in..., stream): every
 * pointer argument passed as void * (the descriptor handle, const void * inputs and the
 * stream have the same representation), the status an int; as ctypes calls it too. */
typedef int (*Execute1)(void *, void *, size_t, void *, void *, void *);
typedef int (*Execute2)(void *, void *, size_t, void *, void *, void *, void *);

typedef struct Slot {
    PyObject_HEAD
    int busy;   /* the lock: set by the one call using the plan (under the GIL) */
    int armed;  /* arm()ed and not detached: may be registered and run */
    PyObject *plan;  /* borrowed: the _Plan owning this Slot (its `used` flag is set on a hit) */
    void *execute;   /* oprt_execute_<op> */
    int num_inputs;
    void *desc, *workspace, *stream;
    size_t workspace_size;
    PyObject *check; /* the library's check(status): raises the status's exception */
    PyObject *result; /* bind()'s: what run() returns (a prepared op's output), or NULL */
    /* fallback()'s: where run() cannot run, it returns fallback(owner()) (owner: a weak
     * reference to the prepared op) instead of None; NULL when not set. */
    PyObject *fallback, *owner;
    void *data[1 + MAX_INPUTS]; /* bind()'s data pointers: the output's, then the inputs' */
    struct Op *ops[KEYS_PER_SLOT]; /* where this Slot is registered, one Node each */
    Node *nodes[KEYS_PER_SLOT];
    int num_keys;
} Slot;

typedef struct Op {
    PyObject_HEAD
    int num_inputs;
    int enabled;
    Node *buckets[BUCKETS];
} Op;

static PyTypeObject *SlotType, *OpType;

static void free_node(Node *node) {
    Py_XDECREF(node->recipe.fn);
    Py_XDECREF(node->recipe.args);
    Py_XDECREF(node->recipe.kwnames);
    PyMem_Free(node);
}

static void unlink_node(Op *op, Node *node) {
    Node **p = &op->buckets[node->hash % BUCKETS];
    while (*p != NULL && *p != node)
        p = &(*p)->next;
    if (*p == node)
        *p = node->next;
    free_node(node);
}

static void slot_detach(Slot *s) {
    for (int i = 0; i < s->num_keys; ++i)
        unlink_node(s->ops[i], s->nodes[i]);
    s->num_keys = 0;
    s->armed = 0;
    s->plan = NULL;
}

static PyObject *slot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_Size(args) != 0 || (kwargs != NULL && PyDict_Size(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Slot() takes no arguments");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    return alloc(type, 0); /* zeroed */
}

static void slot_clear_refs(Slot *s) {
    Py_CLEAR(s->check);
    Py_CLEAR(s->result);
}

/* Calls the armed Slot's execute on `data` (the output's pointer, then the inputs'),
 * the GIL released: the caller holds the busy flag, which keeps the plan ours while the
 * kernel runs. Returns the library's status. */
static int slot_call(Slot *s, void *const *data) {
    int status;
    Py_BEGIN_ALLOW_THREADS
    if (s->num_inputs == 1)
        status = ((Execute1)s->execute)(s->desc, s->workspace, s->workspace_size, data[0],
                                        data[1], s->stream);
    else
        status = ((Execute2)s->execute)(s->desc, s->workspace, s->workspace_size, data[0],
                                        data[1], data[2], s->stream);
    Py_END_ALLOW_THREADS
    return status;
}

/* Raises a nonzero status's exception through the library's check(); returns -1. */
static int slot_raise(Slot *s, int status) {
    PyObject *st = PyLong_FromLong(status);
    PyObject *r = st ? call1(s->check, st) : NULL; /* raises */
    Py_XDECREF(st);
    if (r != NULL) { /* check() did not raise: still an error */
        Py_DECREF(r);
        PyErr_Format(PyExc_RuntimeError, "operator_runtime: execute returned status %d", status);
    }
    return -1;
}

/* slot_call, then slot_raise where it failed: 0 or -1. */
static int slot_execute(Slot *s, void *const *data) {
    const int status = slot_call(s, data);
    return status == 0 ? 0 : slot_raise(s, status);
}

static void slot_dealloc(Slot *s) {
    PyTypeObject *type = Py_TYPE((PyObject *)s);
    slot_detach(s);
    slot_clear_refs(s);
    Py_CLEAR(s->fallback);
    Py_CLEAR(s->owner);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(s);
    Py_DECREF(type);
}

/* acquire(blocking=True): as threading.Lock's (no timeout). Waiting gives the GIL away. */
static PyObject *slot_acquire(Slot *s, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    int blocking = 1;
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (nargs + nkw > 1) {
        PyErr_SetString(PyExc_TypeError, "acquire(blocking=True) takes one argument");
        return NULL;
    }
    if (nargs + nkw == 1) {
        if (nkw && PyUnicode_CompareWithASCIIString(PyTuple_GetItem(kwnames, 0), "blocking")) {
            PyErr_SetString(PyExc_TypeError, "acquire() takes only blocking=");
            return NULL;
        }
        blocking = PyObject_IsTrue(args[0]);
        if (blocking < 0)
            return NULL;
    }
    if (s->busy && !blocking)
        Py_RETURN_FALSE;
    while (s->busy) { /* another thread runs the plan; it frees the Slot under the GIL */
        Py_BEGIN_ALLOW_THREADS
        sched_yield();
        Py_END_ALLOW_THREADS
    }
    s->busy = 1;
    Py_RETURN_TRUE;
}

static PyObject *slot_release(Slot *s, PyObject *unused) {
    if (!s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
        return NULL;
    }
    s->busy = 0;
    Py_RETURN_NONE;
}

static PyObject *slot_exit(Slot *s, PyObject *const *args, Py_ssize_t nargs) {
    return slot_release(s, NULL);
}

static PyObject *slot_locked(Slot *s, PyObject *unused) { return PyBool_FromLong(s->busy); }

/* arm(plan, execute, num_inputs, desc, workspace, workspace_size, stream, check): what
 * the C call needs, once. */
static PyObject *slot_arm(Slot *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "arm() takes 8 arguments");
        return NULL;
    }
    if (s->armed || s->plan != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Slot already armed");
        return NULL;
    }
    s->plan = args[0];
    s->execute = PyLong_AsVoidPtr(args[1]);
    s->num_inputs = (int)PyLong_AsLong(args[2]);
    s->desc = PyLong_AsVoidPtr(args[3]);
    s->workspace = args[4] == Py_None ? NULL : PyLong_AsVoidPtr(args[4]);
    s->workspace_size = PyLong_AsSize_t(args[5]);
    s->stream = args[6] == Py_None ? NULL : PyLong_AsVoidPtr(args[6]);
    if (PyErr_Occurred()) {
        s->plan = NULL;
        return NULL;
    }
    if (s->num_inputs < 1 || s->num_inputs > MAX_INPUTS || s->execute == NULL) {
        s->plan = NULL;
        PyErr_SetString(PyExc_ValueError, "arm(): bad execute or input count");
        return NULL;
    }
    slot_clear_refs(s);
    s->check = Py_NewRef(args[7]);
    s->armed = 1;
    Py_RETURN_NONE;
}

/* bind(result, out_ptr, in1_ptr[, in2_ptr]): fixed data pointers (int or None for NULL) for
 * run(), and the object it returns: a prepared op's arrays. After arm(). */
static PyObject *slot_bind(Slot *s, PyObject *const *args, Py_ssize_t nargs) {
    if (!s->armed || nargs != 2 + s->num_inputs) {
        PyErr_SetString(PyExc_TypeError, "bind() takes the result and a pointer per array, "
                                         "after arm()");
        return NULL;
    }
    void *data[1 + MAX_INPUTS] = {NULL};
    for (Py_ssize_t i = 1; i < nargs; ++i)
        if (args[i] != Py_None && (data[i - 1] = PyLong_AsVoidPtr(args[i])) == NULL
            && PyErr_Occurred())
            return NULL;
    memcpy(s->data, data, sizeof data);
    PyObject *old = s->result;
    s->result = Py_NewRef(args[0]);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

/* fallback(func, owner): where run() cannot run, it returns func(owner()) instead of None,
 * owner a weak reference to the prepared op (so that the Slot keeps it alive no more than
 * before; None once it is gone): its Python path. A prepared op's run is then this Slot's
 * run itself. */
static PyObject *slot_set_fallback(Slot *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fallback() takes a function and a weak reference");
        return NULL;
    }
    PyObject *old_fallback = s->fallback, *old_owner = s->owner;
    s->fallback = Py_NewRef(args[0]);
    s->owner = Py_NewRef(args[1]);
    Py_XDECREF(old_fallback);
    Py_XDECREF(old_owner);
    Py_RETURN_NONE;
}

/* run()'s Python path: fallback(owner()), or None without a fallback. */
static PyObject *slot_run_fallback(Slot *s) {
    if (s->fallback == NULL)
        Py_RETURN_NONE;
    PyObject *owner = PyObject_CallNoArgs(s->owner);
    if (owner == NULL)
        return NULL;
    PyObject *r = call1(s->fallback, owner); /* owner None: a run() kept past its prepared op */
    Py_DECREF(owner);
    return r;
}

/* run(): execute on bind()'s pointers; returns bind()'s result. Where the Slot cannot run
 * (not armed or bound, detached, or in use by another thread): the fallback's result, or
 * None without one (the caller then takes its Python path). */
static PyObject *slot_run(Slot *s, PyObject *unused) {
    if (!s->armed || s->busy || s->result == NULL)
        return slot_run_fallback(s);
    s->busy = 1;
    Py_INCREF((PyObject *)s);
    const int status = slot_call(s, s->data);
    s->busy = 0; /* before check() runs Python code, which may free the prepared op */
    PyObject *result = status == 0 ? Py_NewRef(s->result) : NULL;
    if (status != 0)
        slot_raise(s, status);
    Py_DECREF((PyObject *)s);
    return result;
}

/* detach(): removes the Slot from every table (the plan is being destroyed). */
static PyObject *slot_detach_py(Slot *s, PyObject *unused) {
    slot_detach(s);
    Py_RETURN_NONE;
}

static PyObject *slot_get_keys(Slot *s, void *closure) { return PyLong_FromLong(s->num_keys); }

static PyMethodDef slot_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))slot_acquire, METH_FASTCALL | METH_KEYWORDS,
     "acquire(blocking=True): takes the plan (False: only if free); True if taken."},
    {"release", (PyCFunction)slot_release, METH_NOARGS, "Frees the plan."},
    {"__enter__", (PyCFunction)(void (*)(void))slot_acquire, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))slot_exit, METH_FASTCALL, NULL},
    {"locked", (PyCFunction)slot_locked, METH_NOARGS, "Whether a call holds the plan."},
    {"arm", (PyCFunction)(void (*)(void))slot_arm, METH_FASTCALL, "Internal: the C call's data."},
    {"detach", (PyCFunction)slot_detach_py, METH_NOARGS, "Unregisters the Slot everywhere."},
    {"bind", (PyCFunction)(void (*)(void))slot_bind, METH_FASTCALL,
     "Internal: run()'s data pointers and result."},
    {"run", (PyCFunction)slot_run, METH_NOARGS,
     "Runs on bind()'s pointers: bind()'s result; when it cannot run now, the fallback's or None."},
    {"fallback", (PyCFunction)(void (*)(void))slot_set_fallback, METH_FASTCALL,
     "Internal: fallback(func, owner_ref): run()'s Python path."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef slot_getset[] = {
    {"keys", (getter)slot_get_keys, NULL, "How many keys reach this Slot.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot slot_slots[] = {
    {Py_tp_doc, "A plan's lock (as threading.Lock) and its C call: see the module's docstring."},
    {Py_tp_new, slot_new},
    {Py_tp_dealloc, slot_dealloc},
    {Py_tp_methods, slot_methods},
    {Py_tp_getset, slot_getset},
    {0, NULL},
};

static PyType_Spec slot_spec = {"operator_runtime._fastcall.Slot", sizeof(Slot), 0,
                                Py_TPFLAGS_DEFAULT, slot_slots};

/* ---- Op: a table per operator and its hit path ----------------------------------------- */

/* The key of a call's arguments (out, inputs..., param, backend, variant) and the arrays'
 * data pointers (reads[0] is the output's; NULL for a new one). Returns 1, or 0 for a
 * miss. *device: the CUDA device of the arrays, -1 on the host. */
static int make_key(Op *op, PyObject *const *args, Key *k, Read *reads, long *device) {
    int n = op->num_inputs;
    PyObject *out = args[0], *param = args[n + 1], *backend = args[n + 2],
             *variant = args[n + 3];
    k->len = 0;
    k->full = 0;
    if (!key_str(k, backend))
        return 0;
    if (variant == Py_None)
        key_i64(k, -1);
    else if (!key_str(k, variant))
        return 0;
    if (param == Py_None) {
        key_i64(k, 0);
    } else if (PyFloat_CheckExact(param)) { /* by its bits: 0.0 and -0.0 are not one slope */
        double v = PyFloat_AsDouble(param);
        key_i64(k, 1);
        key_put(k, &v, sizeof v);
    } else if (PyLong_CheckExact(param)) { /* not bool: True is no axis */
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(param, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        key_i64(k, 2);
        key_i64(k, v);
    } else {
        return 0;
    }
    PyObject *first = out == Py_None ? args[1] : out;
    PyTypeObject *type = Py_TYPE(first);
    int kind = (PyObject *)type == ndarray_type ? KIND_NUMPY
             : (PyObject *)type == tensor_type  ? KIND_TORCH : 0;
    if (kind == 0)
        return 0;
    key_i64(k, out == Py_None); /* "new output" */
    *device = -1;
    reads[0].data = NULL;
    for (int i = out == Py_None ? 1 : 0; i <= n; ++i) {
        if ((PyObject *)Py_TYPE(args[i]) != (PyObject *)type)
            return 0; /* one array library per call */
        long dev = -1;
        int ok = kind == KIND_NUMPY ? read_numpy(k, args[i], i == 0, &reads[i])
                                    : read_torch(k, args[i], i == 0, &reads[i], &dev);
        if (!ok)
            return 0;
        if (dev >= 0)
            *device = dev;
    }
    if (*device >= 0) { /* CUDA: the current stream of the tensors' device, as torch would use
                         * (the library launches on the device that holds the buffers) */
        if (cuda_get_stream == NULL)
            return 0;
        PyObject *dev = PyLong_FromLong(*device);
        PyObject *stream = dev ? call1(cuda_get_stream, dev) : NULL;
        Py_XDECREF(dev);
        if (stream == NULL) {
            PyErr_Clear();
            return 0;
        }
        key_i64(k, (int64_t)PyLong_AsLongLong(stream));
        Py_DECREF(stream);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    }
    return !k->full;
}

static Node *lookup(Op *op, const Key *k, uint64_t hash) {
    for (Node *node = op->buckets[hash % BUCKETS]; node != NULL; node = node->next)
        if (node->hash == hash && node->len == k->len && memcmp(node->key, k->bytes, k->len) == 0)
            return node;
    return NULL;
}

/* The data pointer of a new output (numpy: its buffer; torch: data_ptr()). */
static int new_output_data(const Recipe *r, PyObject *out, void **data) {
    if (r->kind == KIND_NUMPY) {
        Py_buffer view;
        if (PyObject_GetBuffer(out, &view, PyBUF_WRITABLE) < 0)
            return 0;
        *data = view.buf;
        PyBuffer_Release(&view);
        return 1;
    }
    PyObject *ptr = call_method0(out, s_data_ptr);
    if (ptr == NULL)
        return 0;
    *data = PyLong_AsVoidPtr(ptr);
    Py_DECREF(ptr);
    return !PyErr_Occurred();
}

static PyObject *new_output(const Recipe *r, PyObject *src) {
    PyObject *stack[8];
    Py_ssize_t n = PyTuple_Size(r->args), nkw = r->kwnames ? PyTuple_Size(r->kwnames) : 0;
    Py_ssize_t at = 1; /* stack[0] is free: PY_VECTORCALL_ARGUMENTS_OFFSET */
    if (n + 2 > 8) {
        PyErr_SetString(PyExc_RuntimeError, "new output: too many arguments");
        return NULL;
    }
    if (r->takes_src)
        stack[at++] = src;
    for (Py_ssize_t i = 0; i < n; ++i)
        stack[at++] = PyTuple_GetItem(r->args, i);
    return PyObject_Vectorcall(r->fn, stack + 1,
                               (size_t)(at - 1 - nkw) | PY_VECTORCALL_ARGUMENTS_OFFSET, r->kwnames);
}

/* call(out, in1[, in2], param, backend, variant): the output after a hit, None on a miss. */
static PyObject *op_call(Op *op, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != op->num_inputs + 4) {
        PyErr_Format(PyExc_TypeError, "call() takes %d arguments", op->num_inputs + 4);
        return NULL;
    }
    if (!op->enabled)
        Py_RETURN_NONE;
    Key k;
    Read reads[1 + MAX_INPUTS];
    long device;
    if (!make_key(op, args, &k, reads, &device))
        Py_RETURN_NONE;
    Node *node = lookup(op, &k, key_hash(&k));
    Slot *s = node ? node->slot : NULL;
    if (s == NULL || s->busy || !s->armed)
        Py_RETURN_NONE; /* new, or in use by another thread: the Python path makes its own */
    s->busy = 1;
    Py_INCREF((PyObject *)s);
    PyObject *result = NULL;
    if (PyObject_SetAttr(s->plan, s_used, Py_True) < 0) /* CLOCK: a hit keeps the plan */
        goto done;
    PyObject *out = args[0];
    if (out == Py_None) {
        result = new_output(&node->recipe, args[1]);
        if (result == NULL || !new_output_data(&node->recipe, result, &reads[0].data)) {
            Py_CLEAR(result);
            goto done;
        }
    } else {
        result = Py_NewRef(out);
    }
    void *data[1 + MAX_INPUTS] = {reads[0].data, reads[1].data,
                                  op->num_inputs > 1 ? reads[2].data : NULL};
    if (slot_execute(s, data) != 0)
        Py_CLEAR(result);
done:
    s->busy = 0;
    Py_DECREF((PyObject *)s);
    return result;
}

/* register(slot, recipe, out, in1[, in2], param, backend, variant): this call's key ->
 * slot. recipe: how a new output is allocated when out is None, a tuple (fn, args,
 * kwnames or None, takes_src, kind) (see Recipe), else None. Returns whether it was
 * registered (False: the arguments have no key, the key is known, the Slot is not armed
 * or has its KEYS_PER_SLOT keys). */
static PyObject *op_register(Op *op, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != op->num_inputs + 6 || Py_TYPE(args[0]) != SlotType) {
        PyErr_Format(PyExc_TypeError, "register() takes a Slot, a recipe and %d arguments",
                     op->num_inputs + 4);
        return NULL;
    }
    Slot *s = (Slot *)args[0];
    PyObject *recipe = args[1];
    Recipe r = {NULL, NULL, NULL, 0, 0};
    if (args[2] == Py_None) { /* a new output: the recipe says how */
        if (!PyTuple_Check(recipe) || PyTuple_Size(recipe) != 5
            || !PyTuple_Check(PyTuple_GetItem(recipe, 1))
            || PyTuple_Size(PyTuple_GetItem(recipe, 1)) > 6) {
            PyErr_SetString(PyExc_TypeError, "register(): a new output needs a recipe "
                                             "(fn, args, kwnames, takes_src, kind)");
            return NULL;
        }
        r.fn = PyTuple_GetItem(recipe, 0);
        r.args = PyTuple_GetItem(recipe, 1);
        r.kwnames = PyTuple_GetItem(recipe, 2) == Py_None ? NULL : PyTuple_GetItem(recipe, 2);
        r.takes_src = PyObject_IsTrue(PyTuple_GetItem(recipe, 3));
        r.kind = (int)PyLong_AsLong(PyTuple_GetItem(recipe, 4));
        if (PyErr_Occurred())
            return NULL;
    }
    Key k;
    Read reads[1 + MAX_INPUTS];
    long device;
    if (!make_key(op, args + 2, &k, reads, &device))
        Py_RETURN_FALSE;
    /* Checked after make_key, which may run Python code (and let another thread destroy
     * the plan); from here to the insertion nothing does. */
    if (!s->armed || s->num_keys == KEYS_PER_SLOT || s->num_inputs != op->num_inputs)
        Py_RETURN_FALSE;
    uint64_t hash = key_hash(&k);
    if (lookup(op, &k, hash) != NULL)
        Py_RETURN_FALSE;
    Node *node = PyMem_Malloc(sizeof(Node) + k.len);
    if (node == NULL)
        return PyErr_NoMemory();
    Py_XINCREF(r.fn);
    Py_XINCREF(r.args);
    Py_XINCREF(r.kwnames);
    node->recipe = r;
    node->hash = hash;
    node->slot = s;
    node->len = k.len;
    memcpy(node->key, k.bytes, k.len);
    node->next = op->buckets[hash % BUCKETS];
    op->buckets[hash % BUCKETS] = node;
    s->ops[s->num_keys] = op;
    s->nodes[s->num_keys] = node;
    s->num_keys++;
    Py_RETURN_TRUE;
}

/* forget(): empties the table without touching the Slots (a forked child: the plans
 * belong to the parent, and Python keeps them unused). */
static PyObject *op_forget(Op *op, PyObject *unused) {
    for (int b = 0; b < BUCKETS; ++b) {
        for (Node *node = op->buckets[b], *next; node != NULL; node = next) {
            next = node->next;
            Slot *s = node->slot;
            s->num_keys = 0; /* its nodes are freed here */
            free_node(node);
        }
        op->buckets[b] = NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *op_size(Op *op, PyObject *unused) {
    long n = 0;
    for (int b = 0; b < BUCKETS; ++b)
        for (Node *node = op->buckets[b]; node != NULL; node = node->next)
            ++n;
    return PyLong_FromLong(n);
}

static PyObject *op_get_enabled(Op *op, void *closure) { return PyBool_FromLong(op->enabled); }

static int op_set_enabled(Op *op, PyObject *value, void *closure) {
    int v = value ? PyObject_IsTrue(value) : 0;
    if (v < 0)
        return -1;
    op->enabled = v;
    return 0;
}

static PyObject *op_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    int n;
    if (!PyArg_ParseTuple(args, "i", &n))
        return NULL;
    if (n < 1 || n > MAX_INPUTS) {
        PyErr_Format(PyExc_ValueError, "Op(num_inputs): 1..%d inputs", MAX_INPUTS);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    Op *op = (Op *)alloc(type, 0);
    if (op != NULL) {
        op->num_inputs = n;
        op->enabled = 1;
    }
    return (PyObject *)op;
}

static void op_dealloc(Op *op) {
    PyTypeObject *type = Py_TYPE((PyObject *)op);
    /* Slots still registered point at this table: detach them (never the case in practice:
     * Ops live as long as the module). */
    for (int b = 0; b < BUCKETS; ++b)
        while (op->buckets[b] != NULL)
            slot_detach(op->buckets[b]->slot);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(op);
    Py_DECREF(type);
}

static PyMethodDef op_methods[] = {
    {"call", (PyCFunction)(void (*)(void))op_call, METH_FASTCALL,
     "call(out, *inputs, param, backend, variant): the output after a hit, None on a miss."},
    {"register", (PyCFunction)(void (*)(void))op_register, METH_FASTCALL,
     "register(slot, out, *inputs, param, backend, variant): the call's key -> slot."},
    {"forget", (PyCFunction)op_forget, METH_NOARGS, "Empties the table (a forked child)."},
    {"size", (PyCFunction)op_size, METH_NOARGS, "The number of keys in the table."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef op_getset[] = {
    {"enabled", (getter)op_get_enabled, (setter)op_set_enabled,
     "False: every call() is a miss (tests of the Python path).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot op_slots[] = {
    {Py_tp_doc, "Op(num_inputs): one operator's table of keys -> Slots and its hit path."},
    {Py_tp_new, op_new},
    {Py_tp_dealloc, op_dealloc},
    {Py_tp_methods, op_methods},
    {Py_tp_getset, op_getset},
    {0, NULL},
};

static PyType_Spec op_spec = {"operator_runtime._fastcall.Op", sizeof(Op), 0,
                              Py_TPFLAGS_DEFAULT, op_slots};

/* ---- module ---------------------------------------------------------------------------- */

static void set_ref(PyObject **where, PyObject *value) {
    PyObject *old = *where;
    *where = value == Py_None ? NULL : Py_NewRef(value);
    Py_XDECREF(old);
}

/* bind_numpy(numpy.ndarray) */
static PyObject *bind_numpy(PyObject *module, PyObject *ndarray) {
    set_ref(&ndarray_type, ndarray);
    Py_RETURN_NONE;
}

/* bind_torch(torch.Tensor, torch._C._cuda_getCurrentRawStream or None,
 *            torch.Tensor.__dlpack_c_exchange_api__ or None) */
static PyObject *bind_torch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "bind_torch() takes 3 arguments");
        return NULL;
    }
    const DLPackExchangeAPI *api = NULL;
    if (args[2] != Py_None) { /* a table of another major version is not used */
        api = PyCapsule_GetPointer(args[2], "dlpack_exchange_api");
        if (api == NULL)
            return NULL;
        if (api->header.version.major != 1)
            api = NULL;
    }
    set_ref(&tensor_type, args[0]);
    set_ref(&cuda_get_stream, args[1]);
    set_ref(&dlpack_capsule, api != NULL ? args[2] : Py_None);
    dltensor_from_py = api != NULL ? api->dltensor_from_py_object_no_sync : NULL;
    return PyBool_FromLong(dltensor_from_py != NULL);
}

static PyMethodDef module_methods[] = {
    {"bind_numpy", bind_numpy, METH_O, "bind_numpy(numpy.ndarray): numpy arrays get keys."},
    {"bind_torch", (PyCFunction)(void (*)(void))bind_torch, METH_FASTCALL,
     "bind_torch(Tensor, cuda_getCurrentRawStream, dlpack_exchange_api): torch tensors get keys; "
     "True if read through DLPack's exchange table."},
    {NULL, NULL, 0, NULL},
};

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **where) {
    *where = (PyTypeObject *)PyType_FromSpec(spec);
    if (*where == NULL)
        return -1;
    const char *dot = strrchr(spec->name, '.');
    return PyModule_AddObjectRef(m, dot + 1, (PyObject *)*where);
}

static int intern(PyObject **where, const char *name) {
    *where = PyUnicode_InternFromString(name);
    return *where ? 0 : -1;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_fastcall",
    "The plan cache's hit path in C (operator_runtime's one-shot calls): see fastcall.c.", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastcall(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (add_type(m, &slot_spec, &SlotType) < 0 || add_type(m, &op_spec, &OpType) < 0
        || intern(&s_used, "used") < 0
        || intern(&s_dtype, "dtype") < 0 || intern(&s_shape, "shape") < 0
        || intern(&s_stride, "stride") < 0 || intern(&s_is_neg, "is_neg") < 0
        || intern(&s_is_cuda, "is_cuda") < 0 || intern(&s_is_cpu, "is_cpu") < 0
        || intern(&s_get_device, "get_device") < 0 || intern(&s_data_ptr, "data_ptr") < 0
        || intern(&s_requires_grad, "requires_grad") < 0
        || PyModule_AddIntConstant(m, "INTERFACE", INTERFACE) < 0
        || PyModule_AddIntConstant(m, "KIND_NUMPY", KIND_NUMPY) < 0
        || PyModule_AddIntConstant(m, "KIND_TORCH", KIND_TORCH) < 0
        || PyModule_AddIntConstant(m, "MAX_INPUTS", MAX_INPUTS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
