// The one validation path shared by every operator (see runtime/internal/tensor.h).
#include "runtime/internal/tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "runtime/internal/dtype.h"
#include "runtime/internal/error.h"

namespace oprt {
namespace {

bool mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out); }

// One dimension of an iteration space, with each operand's stride.
struct Dim {
    int64_t size;
    int64_t stride[ElementwisePlan::kMaxOperands];
};

// Drops size-1 dims, orders the rest by the key operand's stride (largest
// first, stable), then merges neighbours that are dense across each other in
// every operand. Returns the new dim count.
int collapse(Dim *dims, int ndim, int num_operands, int key) {
    int n = 0;
    for (int d = 0; d < ndim; ++d)
        if (dims[d].size != 1) dims[n++] = dims[d];
    for (int i = 1; i < n; ++i)  // stable insertion sort, largest stride first: at most 8 dims
        for (int j = i; j > 0 && dims[j].stride[key] > dims[j - 1].stride[key]; --j)
            std::swap(dims[j], dims[j - 1]);
    int m = 0;
    for (int d = 0; d < n; ++d) {
        if (m > 0) {
            Dim &prev = dims[m - 1];
            // Overflow-checked: an empty tensor may have huge dims and strides.
            int64_t size, step;
            bool mergeable = !mul_overflows(prev.size, dims[d].size, &size);
            for (int k = 0; k < num_operands; ++k)
                mergeable = mergeable && !mul_overflows(dims[d].stride[k], dims[d].size, &step) &&
                            prev.stride[k] == step;
            if (mergeable) {
                prev.size = size;
                for (int k = 0; k < num_operands; ++k) prev.stride[k] = dims[d].stride[k];
                continue;
            }
        }
        dims[m++] = dims[d];
    }
    return m;
}

// Numpy broadcasting of `in` to `out`'s shape: fills strides aligned to out's
// dims (0 where in broadcasts).
oprt_status_t broadcast_strides(const char *op, const char *arg, const oprt_tensor_view_t &in,
                                const char *out_arg, const oprt_tensor_view_t &out,
                                int64_t *strides) {
    const int lead = out.ndim - in.ndim;
    for (int j = 0; j < -lead; ++j)
        if (in.shape[j] != 1)
            return fail(OPRT_ERR_INVALID_ARG,
                        "%s: %s has %d dims and cannot broadcast to %s with %d dims (dim %d has "
                        "size %lld)",
                        op, arg, int(in.ndim), out_arg, int(out.ndim), j, (long long)in.shape[j]);
    for (int i = 0; i < out.ndim; ++i) {
        const int j = i - lead;
        if (j < 0) {
            strides[i] = 0;
        } else if (in.shape[j] == out.shape[i]) {
            strides[i] = in.strides[j];
        } else if (in.shape[j] == 1) {
            strides[i] = 0;
        } else {
            return fail(OPRT_ERR_INVALID_ARG,
                        "%s: %s dim %d has size %lld, which does not match or broadcast to %s "
                        "dim %d of size %lld",
                        op, arg, j, (long long)in.shape[j], out_arg, i, (long long)out.shape[i]);
        }
    }
    return OPRT_SUCCESS;
}

bool same_layout(const oprt_tensor_view_t &a, const oprt_tensor_view_t &b) {
    if (a.ndim != b.ndim) return false;
    for (int d = 0; d < a.ndim; ++d) {
        if (a.shape[d] != b.shape[d]) return false;
        if (a.shape[d] > 1 && a.strides[d] != b.strides[d]) return false;
    }
    return true;
}

bool ranges_overlap(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
    const uintptr_t a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
    return a0 < b0 + uintptr_t(b_bytes) && b0 < a0 + uintptr_t(a_bytes);
}

}  // namespace

ShapeText::ShapeText(const oprt_tensor_view_t &view) {
    int used = std::snprintf(text, sizeof text, "(");
    for (int d = 0; d < view.ndim && used < int(sizeof text); ++d)
        used += std::snprintf(text + used, sizeof text - size_t(used), "%s%lld", d ? ", " : "",
                              (long long)view.shape[d]);
    if (used < int(sizeof text)) std::snprintf(text + used, sizeof text - size_t(used), ")");
}

int64_t view_numel(const oprt_tensor_view_t &view) {
    int64_t n = 1;
    for (int d = 0; d < view.ndim; ++d) n *= view.shape[d];
    return n;
}

OperandSpan view_span(const oprt_tensor_view_t &view) {
    OperandSpan span;
    span.numel = view_numel(view);
    if (span.numel == 0) return span;
    span.extent = 1;
    for (int d = 0; d < view.ndim; ++d) {
        span.extent += (view.shape[d] - 1) * view.strides[d];
        if (view.shape[d] > 1 && view.strides[d] > 0) {
            span.shape[span.ndim] = view.shape[d];
            span.strides[span.ndim] = view.strides[d];
            ++span.ndim;
        }
    }
    return span;
}

// ---- Exact overlap ---------------------------------------------------------------
// Element x of view a sits at a's data + sum(a.strides[d] * x[d]) (0 <= x[d] <
// a.shape[d]); the views share an element when, with y for b,
//     sum(a.strides * x) - sum(b.strides * y) = offset.
// Writing each y[d] as (b.shape[d] - 1) - y'[d] turns every coefficient positive:
//     sum(c[i] * z[i]) = target,  0 <= z[i] <= u[i],  c[i] > 0,
// target = offset + (b.extent - 1). Terms of one coefficient merge (their bounds
// add). The search takes the largest coefficients first: for each value of the
// term in hand only those values leaving a remainder the smaller terms can still
// reach (0..their sum of c * u) and divisible by their gcd are tried, and the
// last two terms are solved in closed form (extended Euclid). Real layouts nest
// (each stride past the smaller dims' reach), which leaves one or two candidate
// values per term; a search past kOverlapWorkLimit steps gives up (kUndecided).
namespace {

struct Term {
    int64_t c, u;
};

int64_t gcd64(int64_t a, int64_t b) {
    while (b != 0) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// Floor and ceiling of n / d for d > 0.
__int128 floor_div(__int128 n, __int128 d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
__int128 ceil_div(__int128 n, __int128 d) { return -floor_div(-n, d); }

// c1 * x + c2 * y = target with 0 <= x <= u1, 0 <= y <= u2 (c1, c2 > 0).
bool solve_two(Term t1, Term t2, int64_t target) {
    const int64_t g = gcd64(t1.c, t2.c);
    if (target % g != 0) return false;
    const int64_t a = t1.c / g, b = t2.c / g, T = target / g;
    // x must be T * a^-1 modulo b (a and b coprime); a^-1 by extended Euclid.
    int64_t r0 = a % b, r1 = b, s0 = 1, s1 = 0;  // invariant: r = s * a (mod b)
    while (r1 != 0) {
        const int64_t q = r0 / r1, r = r0 - q * r1, sn = s0 - q * s1;
        r0 = r1, r1 = r, s0 = s1, s1 = sn;
    }
    const __int128 inv = ((__int128(s0) % b) + b) % b;           // r0 == 1 here
    const __int128 x0 = (inv * (((__int128(T) % b) + b) % b)) % b;  // x = x0 (mod b)
    // y = (T - a x) / b within [0, u2]  <=>  (T - b u2) / a <= x <= T / a.
    const __int128 lo = std::max<__int128>(0, ceil_div(__int128(T) - __int128(b) * t2.u, a));
    const __int128 hi = std::min<__int128>(t1.u, floor_div(T, a));
    if (lo > hi) return false;
    const __int128 first = lo + (((x0 - lo) % b) + b) % b;  // smallest x >= lo with x = x0 (mod b)
    return first <= hi;
}

struct Search {
    Term terms[2 * OPRT_MAX_DIMS];
    int n = 0;
    int64_t reach[2 * OPRT_MAX_DIMS + 1] = {};  // sum of c * u over terms k..n-1
    int64_t gcd[2 * OPRT_MAX_DIMS + 1] = {};    // gcd of c over terms k..n-1
    int64_t work = 0;
    bool gave_up = false;

    bool solve(int k, int64_t target) {
        if (target < 0 || target > reach[k]) return false;
        if (k == n) return target == 0;
        if (target % gcd[k] != 0) return false;
        if (k == n - 1) return true;  // in range and a multiple of c: z = target / c
        if (k == n - 2) return solve_two(terms[k], terms[k + 1], target);
        const Term t = terms[k];
        const int64_t hi = std::min(t.u, target / t.c);
        const int64_t lo = std::max<int64_t>(0, int64_t(ceil_div(__int128(target) - reach[k + 1], t.c)));
        for (int64_t z = hi; z >= lo; --z) {
            if (++work > kOverlapWorkLimit) {
                gave_up = true;
                return false;
            }
            if (solve(k + 1, target - t.c * z)) return true;
            if (gave_up) return false;
        }
        return false;
    }
};

}  // namespace

Overlap elements_overlap(const OperandSpan &a, const OperandSpan &b, int64_t offset) {
    if (a.numel == 0 || b.numel == 0) return Overlap::kNo;
    if (offset >= a.extent || -offset >= b.extent) return Overlap::kNo;  // one ends before the other
    Search s;
    int64_t target = offset;
    auto add = [&](int64_t c, int64_t u) {
        for (int i = 0; i < s.n; ++i)
            if (s.terms[i].c == c) {
                s.terms[i].u += u;
                return;
            }
        s.terms[s.n++] = {c, u};
    };
    for (int d = 0; d < a.ndim; ++d) add(a.strides[d], a.shape[d] - 1);
    for (int d = 0; d < b.ndim; ++d) {
        add(b.strides[d], b.shape[d] - 1);
        target += b.strides[d] * (b.shape[d] - 1);
    }
    std::sort(s.terms, s.terms + s.n, [](const Term &x, const Term &y) { return x.c > y.c; });
    for (int k = s.n - 1; k >= 0; --k) {
        s.reach[k] = s.reach[k + 1] + s.terms[k].c * s.terms[k].u;
        s.gcd[k] = gcd64(s.terms[k].c, s.gcd[k + 1]);
    }
    const bool found = s.solve(0, target);
    if (s.gave_up) return Overlap::kUndecided;
    return found ? Overlap::kYes : Overlap::kNo;
}

oprt_status_t check_view(const char *op, const char *arg, const oprt_tensor_view_t *view) {
    if (view == nullptr) return fail(OPRT_ERR_INVALID_ARG, "%s: %s (tensor view) is NULL", op, arg);
    const int dtype_value = enum_value(view->dtype);
    if (!dtype_is_valid(dtype_value))
        return fail(OPRT_ERR_UNSUPPORTED_DTYPE, "%s: %s.dtype = %d is not a supported dtype (f16=0, "
                    "f32=1, bf16=2)", op, arg, dtype_value);
    if (view->ndim < 0 || view->ndim > OPRT_MAX_DIMS)
        return fail(OPRT_ERR_INVALID_ARG, "%s: %s.ndim = %d is outside 0..%d", op, arg,
                    int(view->ndim), OPRT_MAX_DIMS);
    int64_t numel = 1, extent = 0;
    bool empty = false;
    for (int d = 0; d < view->ndim; ++d) {
        if (view->shape[d] < 0)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s.shape[%d] = %lld is negative", op, arg, d,
                        (long long)view->shape[d]);
        if (view->strides[d] < 0)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s.strides[%d] = %lld is negative", op, arg, d,
                        (long long)view->strides[d]);
        if (view->shape[d] == 0) empty = true;
    }
    for (int d = 0; d < view->ndim; ++d) {
        if (mul_overflows(numel, view->shape[d], &numel))
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s has more elements than int64 can count "
                        "(overflow at dim %d)", op, arg, d);
        int64_t reach;
        if (!empty && (mul_overflows(view->shape[d] - 1, view->strides[d], &reach) ||
                       add_overflows(extent, reach, &extent)))
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s spans more elements than int64 can address "
                        "(overflow at dim %d)", op, arg, d);
    }
    int64_t span, bytes;  // span: elements from data to one past the last; extent may be INT64_MAX
    if (add_overflows(extent, 1, &span) || mul_overflows(span, dtype_size(view->dtype), &bytes))
        return fail(OPRT_ERR_INVALID_ARG, "%s: %s spans more bytes than int64 can address", op, arg);
    return OPRT_SUCCESS;
}

oprt_status_t check_same_dtype(const char *op, const char *arg, const oprt_tensor_view_t *view,
                               const char *ref_arg, const oprt_tensor_view_t *ref) {
    if (view->dtype != ref->dtype)
        return fail(OPRT_ERR_INVALID_ARG, "%s: %s.dtype = %s does not match %s.dtype = %s", op, arg,
                    oprt_dtype_string(view->dtype), ref_arg, oprt_dtype_string(ref->dtype));
    return OPRT_SUCCESS;
}

oprt_status_t check_output_layout(const char *op, const char *arg, const oprt_tensor_view_t *view) {
    if (view_numel(*view) == 0) return OPRT_SUCCESS;
    // Sorted by stride, each dim must step past everything the smaller dims reach.
    int64_t order[OPRT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < view->ndim; ++d) {
        if (view->shape[d] <= 1) continue;
        if (view->strides[d] == 0)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s.strides[%d] = 0 on a dim of size %lld: an "
                        "output cannot broadcast", op, arg, d, (long long)view->shape[d]);
        order[n++] = d;
    }
    for (int i = 1; i < n; ++i)  // insertion sort by stride: at most 8 dims
        for (int j = i; j > 0 && view->strides[order[j]] < view->strides[order[j - 1]]; --j)
            std::swap(order[j], order[j - 1]);
    int64_t reach = 0;  // largest offset reached by the dims seen so far
    for (int i = 0; i < n; ++i) {
        const int64_t d = order[i];
        if (view->strides[d] <= reach)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s has overlapping elements (strides[%lld] = %lld "
                        "revisits memory of smaller dims)", op, arg, (long long)d,
                        (long long)view->strides[d]);
        reach += (view->shape[d] - 1) * view->strides[d];
    }
    return OPRT_SUCCESS;
}

oprt_status_t plan_elementwise(const char *op, const char *out_arg, const oprt_tensor_view_t *out,
                               const char *const *in_args, const oprt_tensor_view_t *const *ins,
                               int num_inputs, ElementwisePlan *plan, ExecContract *contract) {
    oprt_status_t s = check_view(op, out_arg, out);
    if (s != OPRT_SUCCESS) return s;
    for (int k = 0; k < num_inputs; ++k) {
        if ((s = check_view(op, in_args[k], ins[k])) != OPRT_SUCCESS) return s;
        if ((s = check_same_dtype(op, in_args[k], ins[k], out_arg, out)) != OPRT_SUCCESS) return s;
    }
    if ((s = check_output_layout(op, out_arg, out)) != OPRT_SUCCESS) return s;

    Dim dims[OPRT_MAX_DIMS];
    int64_t in_strides[2][OPRT_MAX_DIMS];
    for (int k = 0; k < num_inputs; ++k)
        if ((s = broadcast_strides(op, in_args[k], *ins[k], out_arg, *out, in_strides[k])) !=
            OPRT_SUCCESS)
            return s;
    for (int d = 0; d < out->ndim; ++d) {
        dims[d].size = out->shape[d];
        dims[d].stride[0] = out->strides[d];
        for (int k = 0; k < num_inputs; ++k) dims[d].stride[k + 1] = in_strides[k][d];
    }
    const int num_operands = num_inputs + 1;
    const int ndim = collapse(dims, out->ndim, num_operands, /*key=*/0);

    *plan = ElementwisePlan{};
    plan->dtype = out->dtype;
    plan->num_inputs = num_inputs;
    plan->numel = view_numel(*out);
    plan->ndim = ndim;
    plan->contiguous = true;
    for (int d = 0; d < ndim; ++d) {
        plan->shape[d] = dims[d].size;
        for (int k = 0; k < num_operands; ++k) {
            plan->strides[k][d] = dims[d].stride[k];
            if (ndim > 1 || dims[d].stride[k] != 1) plan->contiguous = false;
        }
    }

    *contract = ExecContract{};
    contract->op = op;
    contract->names[0] = out_arg;
    for (int k = 0; k < num_inputs; ++k) contract->names[k + 1] = in_args[k];
    contract->element_size = dtype_size(out->dtype);
    contract->num_inputs = num_inputs;
    contract->allow_in_place = true;
    contract->out = view_span(*out);
    for (int k = 0; k < num_inputs; ++k) {
        contract->in[k] = view_span(*ins[k]);
        contract->in[k].same_layout_as_out = same_layout(*ins[k], *out);
    }
    return OPRT_SUCCESS;
}

oprt_status_t plan_axis(const char *op, const oprt_tensor_view_t *out,
                        const oprt_tensor_view_t *in, int64_t axis, bool reduce, AxisPlan *plan,
                        ExecContract *contract) {
    oprt_status_t s;
    if ((s = check_view(op, "out", out)) != OPRT_SUCCESS) return s;
    if ((s = check_view(op, "in", in)) != OPRT_SUCCESS) return s;
    if ((s = check_same_dtype(op, "out", out, "in", in)) != OPRT_SUCCESS) return s;
    if ((s = check_output_layout(op, "out", out)) != OPRT_SUCCESS) return s;

    // A 0-d input is treated as shape (1,): axis 0 or -1.
    oprt_tensor_view_t src = *in;
    if (src.ndim == 0) {
        src.ndim = 1;
        src.shape[0] = 1;
        src.strides[0] = 1;
    }
    const int64_t ndim = src.ndim;
    if (axis < -ndim || axis >= ndim)
        return fail(OPRT_ERR_INVALID_ARG, "%s: axis = %lld is out of range for a %d-d input "
                    "(valid: %lld..%lld)", op, (long long)axis, int(in->ndim), (long long)-ndim,
                    (long long)(ndim - 1));
    const int ax = int(axis < 0 ? axis + ndim : axis);

    // out_dim[d]: out's dim for input dim d (-1 for a removed axis).
    int out_dim[OPRT_MAX_DIMS];
    bool shape_ok;
    if (!reduce) {
        shape_ok = out->ndim == in->ndim;
        for (int d = 0; d < in->ndim && shape_ok; ++d) shape_ok = out->shape[d] == in->shape[d];
        for (int d = 0; d < ndim; ++d) out_dim[d] = in->ndim == 0 ? -1 : d;
    } else if (out->ndim == in->ndim && in->ndim > 0) {  // axis kept as size 1
        shape_ok = out->shape[ax] == 1;
        for (int d = 0; d < ndim && shape_ok; ++d)
            shape_ok = d == ax || out->shape[d] == src.shape[d];
        for (int d = 0; d < ndim; ++d) out_dim[d] = d;
    } else if (out->ndim == ndim - 1) {  // axis removed
        shape_ok = true;
        for (int d = 0; d < ndim; ++d) {
            out_dim[d] = d == ax ? -1 : (d < ax ? d : d - 1);
            if (d != ax) shape_ok = shape_ok && out->shape[out_dim[d]] == src.shape[d];
        }
    } else {
        shape_ok = false;
    }
    if (!shape_ok) {
        return fail(OPRT_ERR_INVALID_ARG,
                    reduce ? "%s: out shape %s must be in shape %s with axis %d removed or kept "
                             "as size 1"
                           : "%s: out shape %s must equal in shape %s (axis %d)",
                    op, ShapeText(*out).text, ShapeText(*in).text, ax);
    }

    // An empty input (reduce_sum over an empty axis) is never addressed: its
    // strides may be anything, so the plan holds 0 rather than offsets that overflow.
    const bool in_empty = view_numel(*in) == 0;
    Dim dims[OPRT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < ndim; ++d) {
        if (d == ax) continue;
        dims[n].size = src.shape[d];
        dims[n].stride[0] = in_empty ? 0 : src.strides[d];
        dims[n].stride[1] = out_dim[d] >= 0 ? out->strides[out_dim[d]] : 0;
        ++n;
    }
    n = collapse(dims, n, /*num_operands=*/2, /*key=*/0);

    *plan = AxisPlan{};
    plan->dtype = in->dtype;
    plan->axis_len = src.shape[ax];
    plan->in_axis_stride = in_empty ? 0 : src.strides[ax];
    plan->out_axis_stride = (!reduce && out_dim[ax] >= 0) ? out->strides[out_dim[ax]] : 0;
    if (n > 0 && dims[n - 1].stride[0] == 1 && dims[n - 1].stride[1] == 1) {
        plan->inner = dims[n - 1].size;
        --n;
    }
    plan->outer_ndim = n;
    for (int d = 0; d < n; ++d) {
        plan->outer_shape[d] = dims[d].size;
        plan->in_outer_strides[d] = dims[d].stride[0];
        plan->out_outer_strides[d] = dims[d].stride[1];
        if (mul_overflows(plan->outer, dims[d].size, &plan->outer)) plan->outer = 0;  // empty: below
    }
    plan->in_numel = view_numel(*in);
    plan->out_numel = view_numel(*out);
    if (plan->out_numel == 0) {
        // Nothing to compute (execute returns before the backend): the plan of one
        // empty row, which every backend plans as trivial. The dims of an empty
        // tensor may multiply past int64, and a row count of 0 divides by zero in
        // a backend's planning.
        plan->axis_len = 0;
        plan->in_axis_stride = plan->out_axis_stride = 0;
        plan->outer = plan->inner = 1;
        plan->outer_ndim = 0;
    }

    *contract = ExecContract{};
    contract->op = op;
    contract->names[0] = "out";
    contract->names[1] = "in";
    contract->element_size = dtype_size(in->dtype);
    contract->num_inputs = 1;
    contract->allow_in_place = false;
    contract->out = view_span(*out);
    contract->in[0] = view_span(*in);
    return OPRT_SUCCESS;
}

oprt_status_t check_execute(const ExecContract &c, const void *workspace, size_t workspace_size,
                            const void *out, const void *in0, const void *in1) {
    if (workspace_size < c.workspace_bytes)
        return fail(OPRT_ERR_INSUFFICIENT_WORKSPACE, "%s: workspace_size = %zu is smaller than the "
                    "%zu bytes this descriptor needs", c.op, workspace_size, c.workspace_bytes);
    if (c.workspace_bytes > 0 && workspace == nullptr)
        return fail(OPRT_ERR_INVALID_ARG, "%s: workspace is NULL but %zu bytes are needed", c.op,
                    c.workspace_bytes);
    return check_execute_operands(c, out, in0, in1);
}

oprt_status_t check_execute_operands(const ExecContract &c, const void *out, const void *in0,
                                     const void *in1) {
    const char *const *names = c.names;
    const void *ptrs[3] = {out, in0, in1};
    const OperandSpan *spans[3] = {&c.out, &c.in[0], &c.in[1]};
    for (int k = 0; k <= c.num_inputs; ++k) {
        if (spans[k]->numel == 0) continue;
        if (ptrs[k] == nullptr)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s is NULL for a tensor of %lld elements", c.op,
                        names[k], (long long)spans[k]->numel);
        if (reinterpret_cast<uintptr_t>(ptrs[k]) % uintptr_t(c.element_size) != 0)
            return fail(OPRT_ERR_INVALID_ARG, "%s: %s = %p is not aligned to its %lld-byte elements",
                        c.op, names[k], ptrs[k], (long long)c.element_size);
    }
    if (c.out.numel == 0) return OPRT_SUCCESS;
    for (int k = 1; k <= c.num_inputs; ++k) {
        if (spans[k]->numel == 0) continue;
        if (!ranges_overlap(out, c.out.extent * c.element_size, ptrs[k],
                            spans[k]->extent * c.element_size))
            continue;
        if (c.allow_in_place && ptrs[k] == out && spans[k]->same_layout_as_out) continue;
        // The byte ranges meet: do the elements? Both pointers are aligned to the
        // element size, so they are a whole number of elements apart.
        const int64_t offset = int64_t(reinterpret_cast<intptr_t>(ptrs[k]) - reinterpret_cast<intptr_t>(out)) /
                               c.element_size;
        const Overlap overlap = elements_overlap(c.out, *spans[k], offset);
        if (overlap == Overlap::kNo) continue;
        if (overlap == Overlap::kUndecided)
            return fail(OPRT_ERR_INVALID_ARG,
                        "%s: could not decide within %lld search steps whether %s and %s share an "
                        "element (their address ranges interleave); refused as overlapping: pass "
                        "disjoint buffers",
                        c.op, (long long)kOverlapWorkLimit, names[0], names[k]);
        return fail(OPRT_ERR_INVALID_ARG,
                    c.allow_in_place
                        ? "%s: %s overlaps %s without being the very same memory and layout (only "
                          "exact in-place is allowed)"
                        : "%s: %s overlaps %s (this operator cannot run in place)",
                    c.op, names[0], names[k]);
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt
