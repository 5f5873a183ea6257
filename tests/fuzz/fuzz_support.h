// What the fuzz targets share: turning fuzz bytes into tensor views (shapes,
// strides, dtypes: valid, overlapping, broadcast and absurd), buffers sized
// exactly to a view so AddressSanitizer sees any access outside it, element
// values (NaN, inf, denormals, dtype range limits), an independent model of
// what the C API must reject, and f16/bf16 rounding written without the
// library's own conversions. A finding prints what was called and aborts.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "operator_runtime/operator_runtime.h"

namespace fz {

// ---------------------------------------------------------------------------
// Findings

inline std::string &context() {
    static std::string text;
    return text;
}

inline void note(const char *format, ...) __attribute__((format(printf, 1, 2)));
inline void note(const char *format, ...) {
    char buffer[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    context() += buffer;
    static const bool trace = std::getenv("OPRT_FUZZ_TRACE") != nullptr;  // e.g. to see what ASan stopped in
    if (trace) std::fputs(buffer, stderr);
}

[[noreturn]] inline void finding(const char *file, int line, const char *cond, const char *format,
                                 ...) __attribute__((format(printf, 4, 5)));
[[noreturn]] inline void finding(const char *file, int line, const char *cond, const char *format,
                                 ...) {
    char buffer[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    std::fprintf(stderr, "\n==== FUZZ FINDING at %s:%d: %s\n%s\n---- calls:\n%s\n", file, line, cond,
                 buffer, context().c_str());
    std::abort();
}

#define FZ_CHECK(cond, ...)                                                  \
    do {                                                                     \
        if (!(cond)) ::fz::finding(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

// A failed call: a known status, the operator named in a non-empty message.
inline void check_failure(oprt_status_t s, const char *op) {
    FZ_CHECK(s != OPRT_SUCCESS, "expected a failure");
    FZ_CHECK(s == OPRT_ERR_INVALID_ARG || s == OPRT_ERR_UNSUPPORTED_DTYPE ||
                 s == OPRT_ERR_INSUFFICIENT_WORKSPACE,
             "unexpected status %d (%s): %s", int(s), oprt_status_string(s),
             oprt_last_error_message());
    const char *message = oprt_last_error_message();
    FZ_CHECK(message != nullptr && std::strstr(message, op) != nullptr,
             "the message does not name %s: '%s'", op, message ? message : "(null)");
}

// ---------------------------------------------------------------------------
// Element types, independent of the library's conversions (rounding in double)

inline bool dtype_ok(int dt) { return dt == OPRT_DTYPE_F16 || dt == OPRT_DTYPE_F32 || dt == OPRT_DTYPE_BF16; }
inline int64_t esize(int dt) { return dt == OPRT_DTYPE_F32 ? 4 : 2; }

struct Format {
    int precision, emin, emax;  // significand bits (implicit one included), exponent range
};
inline Format format_of(int dt) {
    if (dt == OPRT_DTYPE_F16) return {11, -14, 15};
    if (dt == OPRT_DTYPE_BF16) return {8, -126, 127};
    return {24, -126, 127};
}

// x rounded to the nearest value of dt: ties to even, overflow to inf.
inline double round_to(int dt, double x) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
    const Format f = format_of(dt);
    int e;
    std::frexp(x, &e);
    const int exp = std::max(e - 1, f.emin);
    const double ulp = std::ldexp(1.0, exp - (f.precision - 1));
    const double r = std::nearbyint(x / ulp) * ulp;
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
    if (std::fabs(r) > max_finite) return std::copysign(HUGE_VAL, x);
    return r;
}

inline double decode(int dt, const uint8_t *p) {
    if (dt == OPRT_DTYPE_F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    uint16_t b;
    std::memcpy(&b, p, 2);
    if (dt == OPRT_DTYPE_BF16) {
        const uint32_t u = uint32_t(b) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    const double sign = (b & 0x8000) ? -1.0 : 1.0;
    const int exp = (b >> 10) & 0x1f, mant = b & 0x3ff;
    if (exp == 0x1f) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
    if (exp == 0) return sign * std::ldexp(double(mant), -24);
    return sign * std::ldexp(double(1024 + mant), exp - 25);
}

// Stores x rounded to dt (NaN as the quiet NaN of dt).
inline void encode(int dt, double x, uint8_t *p) {
    const double r = round_to(dt, x);
    if (dt == OPRT_DTYPE_F32) {
        const float f = float(r);
        std::memcpy(p, &f, 4);
        return;
    }
    uint16_t b;
    if (dt == OPRT_DTYPE_BF16) {
        const float f = std::isnan(r) ? std::numeric_limits<float>::quiet_NaN() : float(r);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        b = uint16_t(u >> 16);  // exact: r is a bf16 value
    } else {
        const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
        const double a = std::fabs(r);
        if (std::isnan(r)) b = 0x7e00;
        else if (std::isinf(a)) b = sign | 0x7c00;
        else if (a < std::ldexp(1.0, -14)) b = sign | uint16_t(a / std::ldexp(1.0, -24));
        else {
            int e;
            std::frexp(a, &e);
            b = sign | uint16_t((e - 1 + 15) << 10) | uint16_t((a / std::ldexp(1.0, e - 1) - 1.0) * 1024.0);
        }
    }
    std::memcpy(p, &b, 2);
}

// A NaN with a payload no operator produces: marks output memory not yet written.
inline void poison(int dt, uint8_t *p) {
    if (dt == OPRT_DTYPE_F32) {
        const uint32_t u = 0x7fa5a5a5u;
        std::memcpy(p, &u, 4);
    } else if (esize(dt) == 2) {
        const uint16_t b = dt == OPRT_DTYPE_F16 ? 0x7da5 : 0x7fa5;
        std::memcpy(p, &b, 2);
    }
}

// ---------------------------------------------------------------------------
// Views

constexpr int64_t kMaxNumel = 1 << 19;      // elements a reference may compute
constexpr int64_t kMaxAllocElems = 1 << 20;  // elements a buffer may hold

// Elements a generated shape keeps to (unless absurd on purpose): a target may lower it.
inline int64_t &shape_budget() {
    static int64_t budget = kMaxNumel;
    return budget;
}

// Elements a buffer of one execute may hold (at most kMaxAllocElems): past it a
// target runs execute on NULL data. Small keeps runs fast (padding and absurd
// strides make extents far larger than the element count).
inline int64_t &alloc_budget() {
    static int64_t budget = kMaxAllocElems;
    return budget;
}

struct View {
    oprt_tensor_view_t v{};
    bool is_null = false;  // pass a NULL view pointer
    bool nested = true;    // strides made as a (padded, permuted) dense layout: no overlap
    const oprt_tensor_view_t *ptr() const { return is_null ? nullptr : &v; }
};

inline int raw_dtype(const oprt_tensor_view_t &v) {
    int d;
    std::memcpy(&d, &v.dtype, sizeof d);
    return d;
}
inline void set_raw_dtype(oprt_tensor_view_t &v, int d) { std::memcpy(&v.dtype, &d, sizeof d); }

// Mostly a valid dtype; now and then one outside the enum.
inline int pick_dtype(FuzzedDataProvider &fdp) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    if (b < 240) return b % 3;
    static const int bad[] = {3, -1, 4, 1000, std::numeric_limits<int>::min(), 0x7fffffff};
    return bad[b % 6];
}

inline int pick_ndim(FuzzedDataProvider &fdp) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    if (b < 160) return b % 4;          // 0..3
    if (b < 250) return 4 + b % 5;      // 4..8
    static const int bad[] = {-1, 9, std::numeric_limits<int32_t>::min(), 64, 100, -8};
    return bad[b % 6];
}

// A dim size: small, around the kernels' thresholds, long rows, or absurd.
inline int64_t pick_size(FuzzedDataProvider &fdp, bool *absurd) {
    const uint8_t b = fdp.ConsumeIntegral<uint8_t>();
    if (b < 190) return b % 7;  // 0..6
    if (b < 244) {
        static const int64_t sizes[] = {7,    8,    9,    15,   16,   17,   31,   32,  33,
                                        63,   64,   65,   127,  128,  129,  1023, 1024, 1025,
                                        2047, 2048, 2049, 4095, 4096, 4097, 16, 67};
        return sizes[b % (sizeof sizes / sizeof sizes[0])];
    }
    if (b < 248) {  // the parallel grain (2^15 elements) and softmax's buffered-row limit (2^18)
        static const int64_t long_rows[] = {32767, 32769, 262144, 262145};
        return long_rows[b % 4];
    }
    *absurd = true;
    static const int64_t bad[] = {-1, std::numeric_limits<int64_t>::max(), int64_t(1) << 40,
                                  std::numeric_limits<int64_t>::min(), int64_t(1) << 62,
                                  3037000500};  // about sqrt(2^63)
    return bad[b % 6];
}

// Shape of `ndim` dims (ndim clamped to 0..8 for the storage). Keeps the
// element count within shape_budget() unless a size is absurd on purpose.
inline void pick_shape(FuzzedDataProvider &fdp, oprt_tensor_view_t &v, bool *absurd) {
    const int n = std::clamp(int(v.ndim), 0, OPRT_MAX_DIMS);
    int64_t numel = 1;
    for (int d = 0; d < n; ++d) {
        bool bad = false;
        int64_t s = pick_size(fdp, &bad);
        if (!bad && s > 0 && numel * s > shape_budget()) s = 1;
        if (!bad && s > 0) numel *= s;
        *absurd = *absurd || bad;
        v.shape[d] = s;
    }
}

// Strides for v's shape. Modes: row-major; permuted with padding (both never
// overlap: `nested`); small random strides (may overlap); row-major with some
// dims broadcast (stride 0); absurd values.
inline void pick_strides(FuzzedDataProvider &fdp, oprt_tensor_view_t &v, bool *nested, bool *absurd) {
    const int n = std::clamp(int(v.ndim), 0, OPRT_MAX_DIMS);
    const uint8_t mode = fdp.ConsumeIntegral<uint8_t>();
    *nested = false;
    if (mode < 150) {  // nested: dims in some order, each stepping past the inner ones (+ padding)
        int order[OPRT_MAX_DIMS];
        for (int d = 0; d < n; ++d) order[d] = d;
        const bool permute = mode >= 70;
        if (permute)
            for (int d = n - 1; d > 0; --d) std::swap(order[d], order[fdp.ConsumeIntegralInRange<int>(0, d)]);
        int64_t step = permute ? fdp.ConsumeIntegralInRange<int64_t>(1, 3) : 1;
        for (int i = n - 1; i >= 0; --i) {
            const int d = order[i];
            const int64_t size = std::max<int64_t>(v.shape[d], 1);
            v.strides[d] = step;
            if (v.shape[d] <= 1 && fdp.ConsumeBool())  // never stepped over: any value is valid
                v.strides[d] = fdp.ConsumeBool() ? int64_t(1) << 50 : fdp.ConsumeIntegralInRange<int64_t>(0, 99);
            const int64_t pad = permute ? fdp.ConsumeIntegralInRange<int64_t>(0, 2) : 0;
            if (__builtin_mul_overflow(step, size, &step) || __builtin_add_overflow(step, pad, &step))
                step = std::numeric_limits<int64_t>::max() / 4;  // only reached with absurd sizes
        }
        *nested = true;
    } else if (mode < 200) {  // small random strides: may overlap or interleave
        for (int d = 0; d < n; ++d) v.strides[d] = fdp.ConsumeIntegralInRange<int64_t>(0, 9);
    } else if (mode < 240) {  // row-major with broadcast dims
        int64_t step = 1;
        for (int d = n - 1; d >= 0; --d) {
            v.strides[d] = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? 0 : step;
            if (__builtin_mul_overflow(step, std::max<int64_t>(v.shape[d], 1), &step))
                step = std::numeric_limits<int64_t>::max() / 4;  // only reached with absurd sizes
        }
    } else {
        *absurd = true;
        static const int64_t bad[] = {0, 1, -1, int64_t(1) << 40, std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min(), int64_t(1) << 62,
                                      std::numeric_limits<int64_t>::max() / 2 + 1};
        for (int d = 0; d < n; ++d) v.strides[d] = bad[fdp.ConsumeIntegralInRange<int>(0, 7)];
    }
}

// A complete view: dtype, ndim, shape, strides.
inline View pick_view(FuzzedDataProvider &fdp, int dtype, bool *absurd) {
    View view;
    set_raw_dtype(view.v, dtype);
    view.v.ndim = pick_ndim(fdp);
    pick_shape(fdp, view.v, absurd);
    bool nested;
    pick_strides(fdp, view.v, &nested, absurd);
    view.nested = nested;
    return view;
}

// ---------------------------------------------------------------------------
// The model: what any correct validation must reject, computed in 128 bits.

struct Extent {
    bool overflow = false;  // element count, reach or bytes beyond int64
    int64_t numel = 0;
    int64_t elems = 0;  // elements from data to one past the last (0 when empty)
};

// Only meaningful for a view with valid dtype, ndim and non-negative shapes/strides.
inline Extent extent_of(const oprt_tensor_view_t &v) {
    const __int128 kMax = std::numeric_limits<int64_t>::max();
    Extent e;
    bool empty = false;
    for (int d = 0; d < v.ndim; ++d) empty = empty || v.shape[d] == 0;
    __int128 numel = empty ? 0 : 1, reach = 0;
    for (int d = 0; d < v.ndim && !empty && !e.overflow; ++d) {
        numel *= v.shape[d];
        reach += __int128(v.shape[d] - 1) * v.strides[d];
        e.overflow = numel > kMax || reach > kMax;
    }
    if (!empty && !e.overflow && (reach + 1) * esize(raw_dtype(v)) > kMax) e.overflow = true;
    if (!e.overflow) {
        e.numel = int64_t(numel);
        e.elems = empty ? 0 : int64_t(reach + 1);
    }
    return e;
}

// Why a view must be rejected, or nullptr.
inline const char *view_defect(const View &view) {
    if (view.is_null) return "NULL view";
    const oprt_tensor_view_t &v = view.v;
    if (!dtype_ok(raw_dtype(v))) return "bad dtype";
    if (v.ndim < 0 || v.ndim > OPRT_MAX_DIMS) return "bad ndim";
    for (int d = 0; d < v.ndim; ++d)
        if (v.shape[d] < 0 || v.strides[d] < 0) return "negative shape or stride";
    if (extent_of(v).overflow) return "int64 overflow";
    return nullptr;
}

// Calls fn(linear, offset) for every element in row-major order.
template <typename Fn>
void for_each_element(const oprt_tensor_view_t &v, Fn fn) {
    int64_t numel = 1;
    for (int d = 0; d < v.ndim; ++d) numel *= v.shape[d];
    int64_t idx[OPRT_MAX_DIMS] = {};
    int64_t offset = 0;
    for (int64_t i = 0; i < numel; ++i) {
        fn(i, offset);
        for (int d = v.ndim - 1; d >= 0; --d) {  // odometer
            if (++idx[d] < v.shape[d]) {
                offset += v.strides[d];
                break;
            }
            offset -= (v.shape[d] - 1) * v.strides[d];
            idx[d] = 0;
        }
    }
}

// Whether two elements of an output share an address (exact, by enumeration).
inline bool output_self_overlaps(const oprt_tensor_view_t &v, int64_t elems) {
    std::vector<uint8_t> seen(size_t(elems), 0);
    bool overlap = false;
    for_each_element(v, [&](int64_t, int64_t off) {
        if (seen[size_t(off)]++) overlap = true;
    });
    return overlap;
}

// ---------------------------------------------------------------------------
// Buffers

// memcmp == 0 that also takes empty ranges (whose pointers may be NULL).
inline bool same_bytes(const void *a, const void *b, size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

// One malloc'ed block of exactly `bytes` (ASan flags any access outside it).
struct Block {
    uint8_t *base = nullptr;
    size_t bytes = 0;
    explicit Block(size_t n = 0) : base(static_cast<uint8_t *>(std::malloc(n ? n : 1))), bytes(n) {}
    ~Block() { std::free(base); }
    Block(const Block &) = delete;
    Block &operator=(const Block &) = delete;
};

// Element values: standard-ish values, specials and dtype limits at a rate the input picks.
struct Values {
    uint64_t state;
    uint8_t special_rate;
    uint64_t next() {  // splitmix64
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double value() {
        const uint64_t r = next();
        if (uint8_t(r) < special_rate) {
            static const double specials[] = {
                0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), HUGE_VAL, -HUGE_VAL,
                1.401298464324817e-45,   // f32 min denormal
                -1e-40,                  // f32 denormal
                5.960464477539063e-08,   // f16 min denormal
                -6.103515625e-05,        // f16 min normal
                65504.0, -65504.0,       // f16 max
                65519.0,                 // rounds to f16 max, not inf
                3.3895313892515355e38,   // bf16 max
                -3.4028234663852886e38,  // f32 max
                1e30, -1e30, 88.5, -87.5, 104.0, -104.0, 1.0, -1.0};
            return specials[(r >> 8) % (sizeof specials / sizeof specials[0])];
        }
        return double(int64_t(r >> 40) - (int64_t(1) << 23)) / double(1 << 20);  // [-8, 8)
    }
};

}  // namespace fz
