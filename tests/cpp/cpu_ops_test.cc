// Numeric checks of every operator on the CPU backend against a float64
// reference: f32/f16/bf16, fresh random data from a printed seed (repeat a run
// with OPRT_TEST_SEED=<seed>), outputs poisoned with a NaN pattern before each
// run (an unwritten element fails, and so does a write between a strided
// output's elements), inputs checked unchanged, every descriptor destroyed
// right after its execute. Shapes sit on both sides of the CPU kernels'
// thresholds: the parallel grain (32768 elements), the buffered/streaming
// softmax switch (2^18 = 262144) and its 2048-element chunks, the reduce split paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_convert.h"  // the array conversions, tested directly
#include "runtime/internal/dtype.h"        // only to cross-check the test's own conversions
#include "test_support.h"

namespace {

using oprt_test::BackendGuard;
using oprt_test::contiguous_strides;
using oprt_test::make_view;
using oprt_test::op_spec;
using oprt_test::OpKind;
using oprt_test::OpSpec;
using Shape = std::vector<int64_t>;

constexpr oprt_dtype_t kAllDtypes[] = {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Seed: one per process, printed; each test derives its own stream from it.

uint32_t global_seed() {
    static const uint32_t seed = [] {
        if (const char *env = std::getenv("OPRT_TEST_SEED")) return uint32_t(std::strtoul(env, nullptr, 0));
        return uint32_t(std::random_device{}());
    }();
    return seed;
}

class SeedPrinter : public ::testing::Environment {
public:
    void SetUp() override {
        std::printf("cpu_ops_test: seed %u (OPRT_TEST_SEED=%u repeats this run)\n", global_seed(),
                    global_seed());
    }
};
[[maybe_unused]] ::testing::Environment *const kSeedEnv = ::testing::AddGlobalTestEnvironment(new SeedPrinter);

std::mt19937 make_rng() {
    const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = std::string(info->test_suite_name()) + "." + info->name();
    uint32_t h = 2166136261u;  // FNV-1a: the same stream for the same test on every platform
    for (char c : name) h = (h ^ uint8_t(c)) * 16777619u;
    return std::mt19937(global_seed() ^ h);
}

// ---------------------------------------------------------------------------
// f16/bf16/f32 on the host, written independently of the library's
// conversions (those are cross-checked below): rounding is done in double.

struct Format {
    int precision;  // significand bits, the implicit one included
    int emin, emax;
};
Format format_of(oprt_dtype_t dt) {
    switch (dt) {
    case OPRT_DTYPE_F16: return {11, -14, 15};
    case OPRT_DTYPE_BF16: return {8, -126, 127};
    default: return {24, -126, 127};
    }
}

// x rounded to the nearest value of dt (ties to even, overflow to inf).
double round_to(oprt_dtype_t dt, double x) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
    const Format f = format_of(dt);
    int e;
    std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
    const int exp = std::max(e - 1, f.emin);
    const double ulp = std::ldexp(1.0, exp - (f.precision - 1));
    const double r = std::nearbyint(x / ulp) * ulp;  // default rounding mode: ties to even
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
    if (std::fabs(r) > max_finite) return std::copysign(kInf, x);
    return r;
}

uint16_t f16_encode(double r) {  // r already representable in f16
    if (std::isnan(r)) return 0x7e00;
    const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
    const double a = std::fabs(r);
    if (std::isinf(a)) return sign | 0x7c00;
    if (a < std::ldexp(1.0, -14)) return sign | uint16_t(a / std::ldexp(1.0, -24));
    int e;
    std::frexp(a, &e);
    const int exp = e - 1;
    const uint16_t mant = uint16_t((a / std::ldexp(1.0, exp) - 1.0) * 1024.0);
    return sign | uint16_t((exp + 15) << 10) | mant;
}

double f16_decode(uint16_t b) {
    const double sign = (b & 0x8000) ? -1.0 : 1.0;
    const int exp = (b >> 10) & 0x1f;
    const int mant = b & 0x3ff;
    if (exp == 0x1f) return mant ? kNaN : sign * kInf;
    if (exp == 0) return sign * std::ldexp(double(mant), -24);
    return sign * std::ldexp(double(1024 + mant), exp - 25);
}

uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float f32_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint16_t bf16_encode(double r) {  // r already representable in bf16 (hence exactly in f32)
    if (std::isnan(r)) return 0x7fc0;
    return uint16_t(f32_bits(float(r)) >> 16);
}
double bf16_decode(uint16_t b) { return double(f32_from_bits(uint32_t(b) << 16)); }

// Bits of x rounded to dt.
uint32_t encode(oprt_dtype_t dt, double x) {
    const double r = round_to(dt, x);
    switch (dt) {
    case OPRT_DTYPE_F16: return f16_encode(r);
    case OPRT_DTYPE_BF16: return bf16_encode(r);
    default: return f32_bits(float(r));
    }
}
double decode(oprt_dtype_t dt, uint32_t bits) {
    switch (dt) {
    case OPRT_DTYPE_F16: return f16_decode(uint16_t(bits));
    case OPRT_DTYPE_BF16: return bf16_decode(uint16_t(bits));
    default: return double(f32_from_bits(bits));
    }
}

// A quiet NaN with a payload no computation produces: an output element that
// still holds it was never written.
uint32_t poison_bits(oprt_dtype_t dt) {
    switch (dt) {
    case OPRT_DTYPE_F16: return 0x7e5a;
    case OPRT_DTYPE_BF16: return 0x7fda;
    default: return 0x7fc0feedu;
    }
}

// ---------------------------------------------------------------------------
// A strided tensor over its own storage.

std::string shape_str(const Shape &s) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
    os << (s.size() == 1 ? ",)" : ")");
    return os.str();
}

int64_t numel_of(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

struct Tensor {
    oprt_dtype_t dtype = OPRT_DTYPE_F32;
    Shape shape, strides;
    int64_t offset = 0;  // elements from the storage start to element 0
    int64_t storage_elems = 0;
    std::vector<uint32_t> words;  // the storage; 4-byte aligned, more via malloc

    int64_t esize() const { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }
    unsigned char *base() { return reinterpret_cast<unsigned char *>(words.data()); }
    const unsigned char *base() const { return reinterpret_cast<const unsigned char *>(words.data()); }
    void *data() { return base() + offset * esize(); }
    int64_t numel() const { return numel_of(shape); }
    // Elements the allocation holds: the view's extent plus slack at the end,
    // which is poisoned and checked too (a write one past the end shows).
    int64_t capacity() const { return int64_t(words.size()) * 4 / esize(); }

    uint32_t bits_at(int64_t e) const {
        if (esize() == 4) return words[size_t(e)];
        uint16_t h;
        std::memcpy(&h, base() + e * 2, 2);
        return h;
    }
    void set_bits_at(int64_t e, uint32_t bits) {
        if (esize() == 4) {
            words[size_t(e)] = bits;
        } else {
            const uint16_t h = uint16_t(bits);
            std::memcpy(base() + e * 2, &h, 2);
        }
    }
    double value_at(int64_t e) const { return decode(dtype, bits_at(e)); }

    // Storage element of each logical element, row-major.
    std::vector<int64_t> logical_offsets() const {
        std::vector<int64_t> offs;
        const int64_t n = numel();
        offs.reserve(size_t(n));
        std::vector<int64_t> idx(shape.size(), 0);
        for (int64_t i = 0; i < n; ++i) {
            int64_t off = offset;
            for (size_t d = 0; d < shape.size(); ++d) off += idx[d] * strides[d];
            offs.push_back(off);
            for (size_t d = shape.size(); d-- > 0;) {
                if (++idx[d] < shape[d]) break;
                idx[d] = 0;
            }
        }
        return offs;
    }
    std::vector<double> values() const {
        std::vector<double> v;
        for (int64_t off : logical_offsets()) v.push_back(value_at(off));
        return v;
    }
    void set_value(int64_t logical, double x) {
        set_bits_at(logical_offsets()[size_t(logical)], encode(dtype, x));
    }
    void set_values(const std::vector<double> &v) {
        const std::vector<int64_t> offs = logical_offsets();
        for (size_t i = 0; i < offs.size(); ++i) set_bits_at(offs[i], encode(dtype, v[i]));
    }
    oprt_tensor_view_t view() { return make_view(dtype, shape, strides, data()); }

    std::string describe() const {
        std::ostringstream os;
        os << oprt_dtype_string(dtype) << " " << shape_str(shape) << " strides "
           << shape_str(strides) << " offset " << offset;
        return os.str();
    }
};

Tensor make_tensor(oprt_dtype_t dt, Shape shape, Shape strides, int64_t offset = 0) {
    Tensor t;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.strides = strides.empty() ? contiguous_strides(t.shape) : std::move(strides);
    t.offset = offset;
    int64_t extent = t.numel() == 0 ? 0 : 1;
    if (extent)
        for (size_t d = 0; d < t.shape.size(); ++d) extent += (t.shape[d] - 1) * t.strides[d];
    t.storage_elems = offset + extent;
    t.words.assign(size_t((t.storage_elems * t.esize() + 3) / 4) + 1, 0u);
    return t;
}

enum class Layout {
    kContiguous,
    kTransposed,  // dims in reverse memory order (dim 0 fastest)
    kSliced,      // every dim padded, innermost step 2, nonzero offset
    kOffset,      // contiguous, one element past the allocation start (not 16-byte aligned)
    kPermuted,    // memory order (1, 2, ..., 0): a non-trivial permutation for 3-d+
};
const char *layout_name(Layout l) {
    switch (l) {
    case Layout::kContiguous: return "contiguous";
    case Layout::kTransposed: return "transposed";
    case Layout::kSliced: return "sliced";
    case Layout::kOffset: return "offset";
    case Layout::kPermuted: return "permuted";
    }
    return "?";
}

Tensor make_layout(oprt_dtype_t dt, const Shape &shape, Layout layout) {
    const size_t nd = shape.size();
    Shape strides(nd);
    auto dense_in_order = [&](const std::vector<size_t> &order_fast_to_slow) {
        int64_t s = 1;
        for (size_t d : order_fast_to_slow) {
            strides[d] = s;
            s *= std::max<int64_t>(shape[d], 1);
        }
    };
    switch (layout) {
    case Layout::kContiguous: return make_tensor(dt, shape, contiguous_strides(shape));
    case Layout::kOffset: return make_tensor(dt, shape, contiguous_strides(shape), 1);
    case Layout::kTransposed: {
        std::vector<size_t> order;
        for (size_t d = 0; d < nd; ++d) order.push_back(d);
        dense_in_order(order);
        return make_tensor(dt, shape, strides);
    }
    case Layout::kPermuted: {
        std::vector<size_t> order;  // fastest first: dim 0, then the last dims
        if (nd > 0) order.push_back(0);
        for (size_t d = nd; d-- > 1;) order.push_back(d);
        dense_in_order(order);
        return make_tensor(dt, shape, strides);
    }
    case Layout::kSliced: {
        int64_t s = 2;
        for (size_t d = nd; d-- > 0;) {
            strides[d] = s;
            s = s * std::max<int64_t>(shape[d], 1) + 3;
        }
        return make_tensor(dt, shape, strides, 5);
    }
    }
    return make_tensor(dt, shape, {});
}

// Every storage element (gaps included) gets a value of dt in [lo, hi].
void fill_uniform(Tensor &t, std::mt19937 &rng, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t e = 0; e < t.storage_elems; ++e) t.set_bits_at(e, encode(t.dtype, dist(rng)));
}

// Multiples of 1/64 in [-1, 1]: every f32 partial sum of up to 2^18 of them is
// exact, so reduce_sum results are exact up to the final rounding.
void fill_grid(Tensor &t, std::mt19937 &rng) {
    std::uniform_int_distribution<int> dist(-64, 64);
    for (int64_t e = 0; e < t.storage_elems; ++e) t.set_bits_at(e, encode(t.dtype, dist(rng) / 64.0));
}

void poison(Tensor &t) {
    for (int64_t e = 0; e < t.capacity(); ++e) t.set_bits_at(e, poison_bits(t.dtype));
}

// Values of `in` broadcast (numpy rules) to `out_shape`, row-major.
std::vector<int64_t> broadcast_offsets(const Tensor &in, const Shape &out_shape) {
    const int64_t n = numel_of(out_shape);
    const size_t lead = out_shape.size() - in.shape.size();
    std::vector<int64_t> offs;
    offs.reserve(size_t(n));
    std::vector<int64_t> idx(out_shape.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
        int64_t off = in.offset;
        for (size_t d = 0; d < in.shape.size(); ++d)
            if (in.shape[d] != 1) off += idx[d + lead] * in.strides[d];
        offs.push_back(off);
        for (size_t d = out_shape.size(); d-- > 0;) {
            if (++idx[d] < out_shape[d]) break;
            idx[d] = 0;
        }
    }
    return offs;
}

// ---------------------------------------------------------------------------
// Running an operator and checking its output.

struct Tol {
    double atol, rtol;
};

// Results fully determined by the contract ("compute in f32, round once to
// the dtype"): vector_add, relu, and reduce_sum of grid data, whose f32 sums
// are exact in any order. The reference models exactly that, so no slack: a
// kernel that truncates instead of rounding, or computes in f16, fails.
Tol exact_tol(oprt_dtype_t) { return {0.0, 0.0}; }

// About one rounding of dt (relative), for results that carry f32 error first.
Tol rounding_tol(oprt_dtype_t dt) {
    switch (dt) {
    case OPRT_DTYPE_F16: return {6e-8, 1e-3};
    case OPRT_DTYPE_BF16: return {1e-38, 8e-3};
    default: return {1e-44, 2e-7};
    }
}

Tol softmax_tol(oprt_dtype_t dt, int64_t row) {
    switch (dt) {
    case OPRT_DTYPE_F16: return {1e-7, 2e-3};  // f16 subnormals below 6.1e-5 have 6e-8 spacing
    case OPRT_DTYPE_BF16: return {1e-12, 1.6e-2};
    default: return {1e-12, row <= 2048 ? 1e-5 : 1e-4};  // f32 sums of long rows
    }
}

bool close_enough(double actual, double expected, double atol, double rtol) {
    if (std::isnan(expected)) return std::isnan(actual);
    if (std::isinf(expected)) return actual == expected;
    if (!std::isfinite(actual)) return false;
    return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);
}

std::string seed_note() {
    return " [seed " + std::to_string(global_seed()) + ", OPRT_TEST_SEED repeats it]";
}

// Checks every logical element of `out` against `expected` (per-element atol
// when given), that nothing between its elements was written, and that no
// element still holds the poison.
void check_output(const Tensor &out, const std::vector<double> &expected, Tol tol,
                  const std::string &ctx, const std::vector<double> *atol_per_element = nullptr) {
    const std::vector<int64_t> offs = out.logical_offsets();
    ASSERT_EQ(offs.size(), expected.size()) << ctx;
    const uint32_t poison = poison_bits(out.dtype);
    int reported = 0, bad = 0;
    std::ostringstream report;
    for (size_t i = 0; i < offs.size(); ++i) {
        const uint32_t bits = out.bits_at(offs[i]);
        const double actual = decode(out.dtype, bits);
        const double atol = atol_per_element ? (*atol_per_element)[i] + tol.atol : tol.atol;
        const bool unwritten = bits == poison;
        if (!unwritten && close_enough(actual, expected[i], atol, tol.rtol)) continue;
        ++bad;
        if (reported++ < 8)
            report << "\n  element " << i << ": expected " << expected[i] << ", got "
                   << (unwritten ? std::string("<never written>") : std::to_string(actual))
                   << " (|diff| " << std::fabs(actual - expected[i]) << ", tol "
                   << atol + tol.rtol * std::fabs(expected[i]) << ")";
    }
    if (bad) ADD_FAILURE() << ctx << ": " << bad << " of " << offs.size() << " elements wrong" << report.str() << seed_note();
    // Writes outside the view (between strided elements, before, after).
    std::vector<bool> inside(size_t(out.capacity()), false);
    for (int64_t off : offs) inside[size_t(off)] = true;
    int64_t stray = 0, first = -1;
    for (int64_t e = 0; e < out.capacity(); ++e)
        if (!inside[size_t(e)] && out.bits_at(e) != poison) {
            if (first < 0) first = e;
            ++stray;
        }
    if (stray) ADD_FAILURE() << ctx << ": " << stray << " storage elements outside out's view were written (first at storage element " << first << ")" << seed_note();
}

// Same bits, element by element (copy moves raw bits).
void check_bits(const Tensor &out, const std::vector<uint32_t> &expected, const std::string &ctx) {
    const std::vector<int64_t> offs = out.logical_offsets();
    ASSERT_EQ(offs.size(), expected.size()) << ctx;
    int bad = 0;
    std::ostringstream report;
    for (size_t i = 0; i < offs.size(); ++i) {
        const uint32_t got = out.bits_at(offs[i]);
        if (got == expected[i]) continue;
        if (bad++ < 8) report << "\n  element " << i << ": expected bits 0x" << std::hex << expected[i] << ", got 0x" << got << std::dec;
    }
    if (bad) ADD_FAILURE() << ctx << ": " << bad << " of " << offs.size() << " elements differ" << report.str() << seed_note();
    const uint32_t poison = poison_bits(out.dtype);
    std::vector<bool> inside(size_t(out.capacity()), false);
    for (int64_t off : offs) inside[size_t(off)] = true;
    for (int64_t e = 0; e < out.capacity(); ++e)
        if (!inside[size_t(e)] && out.bits_at(e) != poison) {
            ADD_FAILURE() << ctx << ": storage element " << e << " outside out's view was written" << seed_note();
            break;
        }
}

// Poisons out, runs op once (create, execute, destroy right away), and checks
// that the inputs are unchanged. Returns false (with a failure) on an error status.
bool run(OpKind kind, Tensor &out, Tensor *in0, Tensor *in1, int64_t axis, float slope,
         const std::string &ctx) {
    const OpSpec &op = op_spec(kind);
    poison(out);
    const std::vector<uint32_t> before0 = in0 ? in0->words : std::vector<uint32_t>();
    const std::vector<uint32_t> before1 = in1 ? in1->words : std::vector<uint32_t>();
    const oprt_tensor_view_t vo = out.view();
    oprt_tensor_view_t v0{}, v1{};
    if (in0) v0 = in0->view();
    if (in1) v1 = in1->view();
    std::string err;
    const oprt_status_t s = oprt_test::run_op(op, vo, in0 ? &v0 : nullptr, in1 ? &v1 : nullptr,
                                              out.data(), in0 ? in0->data() : nullptr,
                                              in1 ? in1->data() : nullptr, axis, slope, &err);
    if (s != OPRT_SUCCESS) {
        ADD_FAILURE() << ctx << ": " << oprt_status_string(s) << ": " << err;
        return false;
    }
    if (in0 && in0->words != before0) ADD_FAILURE() << ctx << ": the input was modified";
    if (in1 && in1->words != before1) ADD_FAILURE() << ctx << ": the second input was modified";
    return true;
}

// --- references, in float64 ------------------------------------------------

std::vector<uint32_t> ref_copy_bits(const Tensor &src, const Shape &out_shape) {
    std::vector<uint32_t> bits;
    for (int64_t off : broadcast_offsets(src, out_shape)) bits.push_back(src.bits_at(off));
    return bits;
}

Shape broadcast_shape(const Shape &a, const Shape &b) {
    Shape out(std::max(a.size(), b.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
        const size_t ia = i + a.size() - out.size(), ib = i + b.size() - out.size();
        const int64_t da = i + a.size() >= out.size() ? a[ia] : 1;
        const int64_t db = i + b.size() >= out.size() ? b[ib] : 1;
        out[i] = da == 1 ? db : da;
    }
    return out;
}

std::vector<double> ref_add(const Tensor &a, const Tensor &b, const Shape &out_shape, oprt_dtype_t dt) {
    const std::vector<int64_t> oa = broadcast_offsets(a, out_shape), ob = broadcast_offsets(b, out_shape);
    std::vector<double> r;
    for (size_t i = 0; i < oa.size(); ++i)
        r.push_back(round_to(dt, round_to(OPRT_DTYPE_F32, a.value_at(oa[i]) + b.value_at(ob[i]))));
    return r;
}

std::vector<double> ref_relu(const Tensor &in, float slope, oprt_dtype_t dt) {
    std::vector<double> r;
    for (double x : in.values()) {
        if (slope == 0.0f)  // plain ReLU: max(x, 0), NaN kept (relu(-inf) = 0, not 0 * -inf)
            r.push_back(x > 0 || std::isnan(x) ? x : 0.0);
        else
            r.push_back(x > 0 ? x : round_to(dt, round_to(OPRT_DTYPE_F32, double(slope) * x)));
    }
    return r;
}

int64_t norm_axis(int64_t axis, size_t ndim) {
    const int64_t n = ndim == 0 ? 1 : int64_t(ndim);
    return axis < 0 ? axis + n : axis;
}

// outer x len x inner of `shape` around `axis` (a 0-d shape is (1,)).
void split_axis(const Shape &shape, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner) {
    Shape s = shape.empty() ? Shape{1} : shape;
    const int64_t ax = norm_axis(axis, shape.size());
    *outer = 1;
    *inner = 1;
    for (int64_t d = 0; d < ax; ++d) *outer *= s[size_t(d)];
    *len = s[size_t(ax)];
    for (size_t d = size_t(ax) + 1; d < s.size(); ++d) *inner *= s[d];
}

// Sums (exact enough in double) and the sum of |x| per output.
void ref_reduce(const Tensor &in, int64_t axis, std::vector<double> *sums, std::vector<double> *abs_sums) {
    int64_t outer, len, inner;
    split_axis(in.shape, axis, &outer, &len, &inner);
    const std::vector<double> v = in.values();
    sums->assign(size_t(outer * inner), 0.0);
    abs_sums->assign(size_t(outer * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < len; ++k)
            for (int64_t i = 0; i < inner; ++i) {
                const double x = v[size_t((o * len + k) * inner + i)];
                (*sums)[size_t(o * inner + i)] += x;
                (*abs_sums)[size_t(o * inner + i)] += std::fabs(x);
            }
}

// exp(x - max) / sum, max over the non-NaN values: NaN anywhere, +inf, or a
// slice of only -inf gives NaN across the slice (as numpy and PyTorch do).
std::vector<double> ref_softmax(const Tensor &in, int64_t axis) {
    int64_t outer, len, inner;
    split_axis(in.shape, axis, &outer, &len, &inner);
    const std::vector<double> v = in.values();
    std::vector<double> r(v.size());
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            auto at = [&](int64_t k) { return size_t((o * len + k) * inner + i); };
            double m = -kInf;
            for (int64_t k = 0; k < len; ++k)
                if (v[at(k)] > m) m = v[at(k)];
            double s = 0.0;
            for (int64_t k = 0; k < len; ++k) s += std::exp(v[at(k)] - m);
            for (int64_t k = 0; k < len; ++k) r[at(k)] = std::exp(v[at(k)] - m) / s;
        }
    return r;
}

std::vector<double> rounded(oprt_dtype_t dt, std::vector<double> v) {
    for (double &x : v) x = round_to(dt, x);
    return v;
}

// --- one checked run per operator -------------------------------------------

void check_copy(Tensor &dst, Tensor &src, const std::string &ctx) {
    const std::vector<uint32_t> want = ref_copy_bits(src, dst.shape);
    if (run(OpKind::kCopy, dst, &src, nullptr, 0, 0.0f, ctx)) check_bits(dst, want, ctx);
}

void check_add(Tensor &out, Tensor &a, Tensor &b, const std::string &ctx) {
    const std::vector<double> want = ref_add(a, b, out.shape, out.dtype);
    if (run(OpKind::kVectorAdd, out, &a, &b, 0, 0.0f, ctx))
        check_output(out, want, exact_tol(out.dtype), ctx);
}

void check_relu(Tensor &out, Tensor &in, float slope, const std::string &ctx) {
    const std::vector<double> want = ref_relu(in, slope, out.dtype);
    if (run(OpKind::kRelu, out, &in, nullptr, 0, slope, ctx))
        check_output(out, want, exact_tol(out.dtype), ctx);
}

// grid == true: the input came from fill_grid, so any f32 accumulation is
// exact and the result is the exact sum rounded once; else f32 accumulation
// error of 2e-5 * sum|x| and one rounding are tolerated.
void check_reduce(Tensor &out, Tensor &in, int64_t axis, bool grid, const std::string &ctx) {
    std::vector<double> sums, abs_sums;
    ref_reduce(in, axis, &sums, &abs_sums);
    std::vector<double> atol(abs_sums.size(), 0.0);
    if (!grid)
        for (size_t i = 0; i < atol.size(); ++i) atol[i] = 2e-5 * abs_sums[i];
    const Tol tol = grid ? exact_tol(out.dtype) : rounding_tol(out.dtype);
    if (run(OpKind::kReduceSum, out, &in, nullptr, axis, 0.0f, ctx))
        check_output(out, rounded(out.dtype, sums), tol, ctx, &atol);
}

void check_softmax(Tensor &out, Tensor &in, int64_t axis, const std::string &ctx) {
    int64_t outer, len, inner;
    split_axis(in.shape, axis, &outer, &len, &inner);
    const std::vector<double> want = ref_softmax(in, axis);
    if (run(OpKind::kSoftmax, out, &in, nullptr, axis, 0.0f, ctx))
        check_output(out, want, softmax_tol(out.dtype, len), ctx);
}

std::string ctx_of(const char *what, const Tensor &out, const Tensor *in0, const Tensor *in1 = nullptr,
                   const std::string &extra = "") {
    std::string s = std::string(what) + ": out " + out.describe();
    if (in0) s += ", in " + in0->describe();
    if (in1) s += ", in1 " + in1->describe();
    if (!extra.empty()) s += ", " + extra;
    return s;
}

// Removes (or keeps as 1) `axis` of `shape`.
Shape reduced_shape(const Shape &shape, int64_t axis, bool keepdim) {
    if (shape.empty()) return {};
    Shape out = shape;
    const int64_t ax = norm_axis(axis, shape.size());
    if (keepdim) out[size_t(ax)] = 1;
    else out.erase(out.begin() + ax);
    return out;
}

class CpuOps : public ::testing::Test {
protected:
    void SetUp() override { guard_ = std::make_unique<BackendGuard>(OPRT_BACKEND_CPU); }
    void TearDown() override { guard_.reset(); }
    std::mt19937 rng_ = make_rng();
    std::unique_ptr<BackendGuard> guard_;
};

const int64_t kOddSizes[] = {1, 3, 17, 33, 1023, 4097};
const int64_t kLarge = 40007;  // above the 32768-element parallel grain, odd

// ---------------------------------------------------------------------------
// The test's conversions agree with the library's (so neither hides a bug).

// f32 values that test the rounding to f16 and bf16: random bit patterns, every
// f16 midpoint (ties, exact in f32) and its neighbours, both signs, and the edges.
std::vector<float> rounding_probes(std::mt19937 &rng) {
    std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
    std::vector<float> probes;
    for (int i = 0; i < 200000; ++i) probes.push_back(f32_from_bits(bits(rng)));
    for (uint32_t b = 0; b < 0x7c00; ++b) {
        const double lo = f16_decode(uint16_t(b)), hi = f16_decode(uint16_t(b + 1));
        for (float t : {float((lo + hi) / 2), std::nextafter(float((lo + hi) / 2), 0.0f),
                        std::nextafter(float((lo + hi) / 2), 1e9f)}) {
            probes.push_back(t);
            probes.push_back(-t);
        }
    }
    for (float t : {65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e-8f, 2.98e-8f, 2.9802322e-8f, 3e-8f, 6.1e-5f,
                    3.4e38f, 1e-40f, -1e-45f, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f})
        probes.push_back(t);
    return probes;
}

TEST_F(CpuOps, DtypeConversionsMatchTheLibrary) {
    for (uint32_t b = 0; b < 65536; ++b) {
        const double mine = f16_decode(uint16_t(b));
        const double lib = oprt::f16_to_f32(oprt::f16_t{uint16_t(b)});
        ASSERT_TRUE(std::isnan(mine) ? std::isnan(lib) : mine == lib) << "f16 bits 0x" << std::hex << b;
        const double mine_bf = bf16_decode(uint16_t(b));
        const double lib_bf = oprt::bf16_to_f32(oprt::bf16_t{uint16_t(b)});
        ASSERT_TRUE(std::isnan(mine_bf) ? std::isnan(lib_bf) : mine_bf == lib_bf) << "bf16 0x" << std::hex << b;
        if (!std::isnan(mine)) {
            ASSERT_EQ(f16_encode(mine), b) << "f16 round trip 0x" << std::hex << b;
        }
        if (!std::isnan(mine_bf)) {
            ASSERT_EQ(bf16_encode(mine_bf), b) << "bf16 round trip 0x" << std::hex << b;
        }
    }
    // f32 -> f16/bf16 rounding: random bit patterns, plus every f16 midpoint.
    const std::vector<float> probes = rounding_probes(rng_);
    for (float f : probes) {
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(oprt::f16_to_f32(oprt::f32_to_f16(f))));
            EXPECT_TRUE(std::isnan(oprt::bf16_to_f32(oprt::f32_to_bf16(f))));
            continue;
        }
        ASSERT_EQ(oprt::f32_to_f16(f).bits, encode(OPRT_DTYPE_F16, f)) << "f32 -> f16 of " << f << " (0x" << std::hex << f32_bits(f) << ")";
        ASSERT_EQ(oprt::f32_to_bf16(f).bits, encode(OPRT_DTYPE_BF16, f)) << "f32 -> bf16 of " << f << " (0x" << std::hex << f32_bits(f) << ")";
    }
}

// The array conversions (runtime/cpu/cpu_convert.h) give the scalar ones' bits on
// every path: every f16 and bf16 value widened, the rounding probes narrowed,
// at offsets and lengths that leave tails. NaN: only NaN-ness (F16C keeps
// more of the payload).
TEST_F(CpuOps, ArrayConversionsMatchTheScalarOnes) {
    using Widen16 = void (*)(const oprt::f16_t *, float *, int64_t);
    using Narrow16 = void (*)(const float *, oprt::f16_t *, int64_t);
    std::vector<std::pair<Widen16, Narrow16>> f16_paths = {
        {oprt::cpu::widen_f16_portable, oprt::cpu::narrow_f16_portable},
        {static_cast<Widen16>(oprt::cpu::widen), static_cast<Narrow16>(oprt::cpu::narrow)}};
    if (oprt::cpu::has_f16c()) f16_paths.push_back({oprt::cpu::widen_f16_f16c, oprt::cpu::narrow_f16_f16c});
    else std::printf("[ note ] no F16C on this CPU: its path is not tested here\n");

    std::vector<oprt::f16_t> h(65536 + 9);
    std::vector<oprt::bf16_t> hb(65536 + 9);
    for (uint32_t b = 0; b < 65536; ++b) h[b + 3].bits = hb[b + 3].bits = uint16_t(b);
    std::vector<float> f(h.size());
    auto same = [](float got, float want) {
        return std::isnan(want) ? std::isnan(got) : f32_bits(got) == f32_bits(want);
    };
    for (auto [widen, narrow] : f16_paths) {
        for (int64_t off : {3, 4}) {
            widen(h.data() + off, f.data(), 65536 + 3 - off);
            for (int64_t i = 0; i < 65536 + 3 - off; ++i)
                ASSERT_TRUE(same(f[size_t(i)], oprt::f16_to_f32(h[size_t(i + off)]))) << "f16 bits 0x" << std::hex << h[size_t(i + off)].bits;
        }
    }
    // Widened and added into running sums: the scalar sum's bits (NaN: NaN).
    using AddWidened = void (*)(const oprt::f16_t *, float *, int64_t);
    std::vector<AddWidened> add_paths = {oprt::cpu::add_widened_f16_portable, oprt::cpu::add_widened};
    if (oprt::cpu::has_f16c()) add_paths.push_back(oprt::cpu::add_widened_f16_f16c);
    std::vector<float> acc0(h.size());  // sums of every magnitude, so the adds round
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (float &a : acc0) a = std::ldexp(unit(rng_), int(rng_() % 48) - 24);
    for (AddWidened add : add_paths) {
        for (int64_t off : {3, 4}) {
            std::vector<float> acc = acc0;
            add(h.data() + off, acc.data(), 65536 + 3 - off);
            for (int64_t i = 0; i < 65536 + 3 - off; ++i)
                ASSERT_TRUE(same(acc[size_t(i)], acc0[size_t(i)] + oprt::f16_to_f32(h[size_t(i + off)])))
                    << "f16 bits 0x" << std::hex << h[size_t(i + off)].bits << " added to " << acc0[size_t(i)];
        }
    }
    for (int64_t off : {3, 4}) {
        oprt::cpu::widen(hb.data() + off, f.data(), 65536 + 3 - off);
        for (int64_t i = 0; i < 65536 + 3 - off; ++i)
            ASSERT_TRUE(same(f[size_t(i)], oprt::bf16_to_f32(hb[size_t(i + off)]))) << "bf16 bits 0x" << std::hex << hb[size_t(i + off)].bits;
    }

    const std::vector<float> probes = rounding_probes(rng_);
    std::vector<oprt::f16_t> out(probes.size());
    std::vector<oprt::bf16_t> outb(probes.size());
    auto same16 = [](uint16_t got, uint16_t want, bool nan, uint16_t exp_mask) {
        return nan ? (got & exp_mask) == exp_mask && (got & ~exp_mask & 0x7fff) != 0 : got == want;
    };
    for (auto [widen, narrow] : f16_paths) {
        (void)widen;
        narrow(probes.data() + 1, out.data(), int64_t(probes.size()) - 1);
        for (size_t i = 1; i < probes.size(); ++i)
            ASSERT_TRUE(same16(out[i - 1].bits, oprt::f32_to_f16(probes[i]).bits, std::isnan(probes[i]), 0x7c00))
                << "f32 -> f16 of " << probes[i] << " (0x" << std::hex << f32_bits(probes[i]) << ")";
    }
    oprt::cpu::narrow(probes.data() + 1, outb.data(), int64_t(probes.size()) - 1);
    for (size_t i = 1; i < probes.size(); ++i)
        ASSERT_TRUE(same16(outb[i - 1].bits, oprt::f32_to_bf16(probes[i]).bits, std::isnan(probes[i]), 0x7f80))
            << "f32 -> bf16 of " << probes[i] << " (0x" << std::hex << f32_bits(probes[i]) << ")";
}

// ---------------------------------------------------------------------------
// copy

TEST_F(CpuOps, CopyOddSizes) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t n : {int64_t(1), int64_t(3), int64_t(17), int64_t(33), int64_t(1023), int64_t(4097), kLarge})
            for (Layout lo : {Layout::kContiguous, Layout::kOffset, Layout::kSliced})
                for (Layout li : {Layout::kContiguous, Layout::kOffset, Layout::kSliced}) {
                    Tensor src = make_layout(dt, {n}, li), dst = make_layout(dt, {n}, lo);
                    fill_uniform(src, rng_, -3, 3);
                    check_copy(dst, src, ctx_of("copy", dst, &src));
                }
}

TEST_F(CpuOps, CopyLayouts) {
    const Shape shapes[] = {{2, 3, 5}, {3, 17, 33}, {2, 3, 4, 5}, {2, 1, 3, 1, 5}, {65, 2, 1, 300}};
    const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced, Layout::kPermuted, Layout::kOffset};
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Shape &s : shapes)
            for (Layout li : layouts)
                for (Layout lo : layouts) {
                    Tensor src = make_layout(dt, s, li), dst = make_layout(dt, s, lo);
                    fill_uniform(src, rng_, -3, 3);
                    check_copy(dst, src, ctx_of("copy", dst, &src, nullptr, std::string(layout_name(li)) + " -> " + layout_name(lo)));
                }
}

TEST_F(CpuOps, CopyBroadcastsSrc) {
    struct Case {
        Shape src, src_strides, dst;
    };
    const Case cases[] = {
        {{1, 5}, {}, {4, 5}},       {{5}, {}, {3, 4, 5}},        {{}, {}, {3, 4}},
        {{3, 1, 5}, {}, {3, 4, 5}}, {{4, 5}, {0, 1}, {4, 5}},    {{4, 5}, {1, 0}, {4, 5}},
        {{7}, {0}, {7}},            {{1}, {}, {kLarge}},         {{300, 1}, {}, {300, 200}},
    };
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Case &c : cases)
            for (Layout lo : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced}) {
                Tensor src = make_tensor(dt, c.src, c.src_strides), dst = make_layout(dt, c.dst, lo);
                fill_uniform(src, rng_, -3, 3);
                check_copy(dst, src, ctx_of("copy broadcast", dst, &src));
            }
}

TEST_F(CpuOps, CopyScalarAndEmpty) {
    for (oprt_dtype_t dt : kAllDtypes) {
        Tensor src = make_tensor(dt, {}, {}), dst = make_tensor(dt, {}, {});
        fill_uniform(src, rng_, -3, 3);
        check_copy(dst, src, ctx_of("copy 0-d", dst, &src));
        for (const Shape &s : {Shape{0}, Shape{3, 0}, Shape{0, 5, 2}, Shape{2, 3, 0, 4}}) {
            Tensor e_src = make_tensor(dt, s, {}), e_dst = make_tensor(dt, s, {});
            check_copy(e_dst, e_src, ctx_of("copy empty", e_dst, &e_src));
        }
    }
}

TEST_F(CpuOps, CopyMovesExactBits) {
    // Every f16/bf16 bit pattern (NaN payloads, -0, subnormals, inf), dense and strided.
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16})
        for (Layout l : {Layout::kContiguous, Layout::kSliced}) {
            Tensor src = make_layout(dt, {65536}, l), dst = make_layout(dt, {65536}, Layout::kContiguous);
            const std::vector<int64_t> offs = src.logical_offsets();
            for (size_t i = 0; i < offs.size(); ++i) src.set_bits_at(offs[i], uint32_t(i));
            check_copy(dst, src, ctx_of("copy bits", dst, &src));
        }
    // f32: NaN payloads (quiet and signalling), -0, subnormals, inf.
    const uint32_t specials[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa5a5a5u, 0x80000000u,
                                 0x00000001u, 0x807fffffu, 0x7f800000u, 0xff800000u, 0x3f800000u};
    for (Layout l : {Layout::kContiguous, Layout::kTransposed}) {
        Tensor src = make_layout(OPRT_DTYPE_F32, {2, 5}, l), dst = make_layout(OPRT_DTYPE_F32, {2, 5}, Layout::kSliced);
        const std::vector<int64_t> offs = src.logical_offsets();
        for (size_t i = 0; i < offs.size(); ++i) src.set_bits_at(offs[i], specials[i]);
        check_copy(dst, src, ctx_of("copy f32 bits", dst, &src));
    }
}

TEST_F(CpuOps, CopyInPlace) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (Layout l : {Layout::kContiguous, Layout::kSliced, Layout::kTransposed}) {
            Tensor t = make_layout(dt, {33, 17}, l);
            fill_uniform(t, rng_, -3, 3);
            const std::vector<uint32_t> before = t.words;
            oprt_tensor_view_t v = t.view();
            std::string err;
            ASSERT_EQ(oprt_test::run_op(op_spec(OpKind::kCopy), v, &v, nullptr, t.data(), t.data(),
                                        nullptr, 0, 0.0f, &err),
                      OPRT_SUCCESS)
                << err;
            EXPECT_EQ(t.words, before) << t.describe();
        }
}

// ---------------------------------------------------------------------------
// vector_add

TEST_F(CpuOps, VectorAddOddSizes) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t n : {int64_t(1), int64_t(3), int64_t(17), int64_t(33), int64_t(1023), int64_t(4097), kLarge})
            for (Layout l : {Layout::kContiguous, Layout::kOffset, Layout::kSliced}) {
                Tensor a = make_layout(dt, {n}, l), b = make_layout(dt, {n}, Layout::kContiguous),
                       out = make_layout(dt, {n}, l == Layout::kSliced ? Layout::kOffset : l);
                fill_uniform(a, rng_, -2, 2);
                fill_uniform(b, rng_, -2, 2);
                check_add(out, a, b, ctx_of("vector_add", out, &a, &b, layout_name(l)));
            }
}

TEST_F(CpuOps, VectorAddLayouts) {
    const Shape shapes[] = {{2, 3, 5}, {3, 17, 33}, {2, 3, 4, 5}, {1, 3, 1, 7}, {45, 2, 400}};
    const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kSliced, Layout::kPermuted};
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Shape &s : shapes)
            for (Layout la : layouts)
                for (Layout lb : layouts)
                    for (Layout lo : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced}) {
                        Tensor a = make_layout(dt, s, la), b = make_layout(dt, s, lb), out = make_layout(dt, s, lo);
                        fill_uniform(a, rng_, -2, 2);
                        fill_uniform(b, rng_, -2, 2);
                        check_add(out, a, b, ctx_of("vector_add", out, &a, &b));
                    }
}

TEST_F(CpuOps, VectorAddBroadcasting) {
    struct Case {
        Shape a, a_strides, b, b_strides;
    };
    const Case cases[] = {
        {{3, 1, 5}, {}, {4, 1}, {}},   {{}, {}, {7}, {}},         {{1}, {}, {17}, {}},
        {{2, 3, 4, 5}, {}, {5}, {}},   {{4, 1}, {}, {1, 6}, {}},  {{1, 1, 1}, {}, {2, 3, 1}, {}},
        {{33, 1}, {}, {1, 33}, {}},    {{4, 5}, {0, 1}, {4, 5}, {1, 0}},
        {{kLarge}, {}, {1}, {}},       {{}, {}, {}, {}},          {{3, 1, 1}, {}, {1, 4, 5}, {}},
        {{200, 1}, {}, {200, 300}, {}}, {{1, 300}, {}, {200, 300}, {}},
    };
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Case &c : cases)
            for (Layout lo : {Layout::kContiguous, Layout::kSliced}) {
                const Shape out_shape = broadcast_shape(c.a, c.b);
                Tensor a = make_tensor(dt, c.a, c.a_strides), b = make_tensor(dt, c.b, c.b_strides),
                       out = make_layout(dt, out_shape, lo);
                fill_uniform(a, rng_, -2, 2);
                fill_uniform(b, rng_, -2, 2);
                check_add(out, a, b, ctx_of("vector_add broadcast", out, &a, &b));
                // Operands swapped: broadcasting is symmetric.
                Tensor out2 = make_layout(dt, out_shape, lo);
                check_add(out2, b, a, ctx_of("vector_add broadcast (swapped)", out2, &b, &a));
            }
}

TEST_F(CpuOps, VectorAddScalarEmptyAndSpecialValues) {
    for (oprt_dtype_t dt : kAllDtypes) {
        for (const Shape &s : {Shape{0}, Shape{3, 0}, Shape{0, 5, 2}}) {
            Tensor a = make_tensor(dt, s, {}), b = make_tensor(dt, s, {}), out = make_tensor(dt, s, {});
            check_add(out, a, b, ctx_of("vector_add empty", out, &a, &b));
        }
        const double big = dt == OPRT_DTYPE_F16 ? 60000.0 : 3e38;
        const std::vector<double> av = {kNaN, 1.0, kInf, kInf, -kInf, big, -big, 0.0, -0.0, 1e-7};
        const std::vector<double> bv = {1.0, kNaN, -kInf, kInf, 2.0, big, -big, -0.0, -0.0, -1e-7};
        Tensor a = make_tensor(dt, {10}, {}), b = make_tensor(dt, {10}, {}), out = make_tensor(dt, {10}, {});
        a.set_values(av);
        b.set_values(bv);
        check_add(out, a, b, ctx_of("vector_add specials", out, &a, &b));
    }
}

TEST_F(CpuOps, VectorAddInPlace) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (Layout l : {Layout::kContiguous, Layout::kSliced, Layout::kTransposed})
            for (int which = 0; which < 4; ++which) {
                // which: 0 out == a, 1 out == b, 2 out == a == b, 3 out == a with b broadcast
                const Shape s = {33, 17};
                Tensor t = make_layout(dt, s, l);
                Tensor other = which == 3 ? make_tensor(dt, {17}, {}) : make_layout(dt, s, Layout::kContiguous);
                fill_uniform(t, rng_, -2, 2);
                fill_uniform(other, rng_, -2, 2);
                const Tensor &a = which == 1 ? other : t;
                const Tensor &b = which == 1 ? t : which == 2 ? t : other;
                const std::vector<double> want = ref_add(a, b, s, dt);
                oprt_tensor_view_t vo = t.view(), va = which == 1 ? other.view() : t.view(),
                                   vb = which == 1 || which == 2 ? t.view() : other.view();
                std::string err;
                ASSERT_EQ(oprt_test::run_op(op_spec(OpKind::kVectorAdd), vo, &va, &vb, t.data(), va.data,
                                            vb.data, 0, 0.0f, &err),
                          OPRT_SUCCESS)
                    << err;
                const std::vector<double> got = t.values();
                const Tol tol = exact_tol(dt);
                for (size_t i = 0; i < got.size(); ++i)
                    ASSERT_TRUE(close_enough(got[i], want[i], tol.atol, tol.rtol))
                        << "in-place case " << which << " " << t.describe() << " element " << i
                        << ": expected " << want[i] << ", got " << got[i] << seed_note();
            }
}

// ---------------------------------------------------------------------------
// relu

TEST_F(CpuOps, ReluSlopesSizesAndLayouts) {
    for (float slope : {0.0f, 0.1f, -2.0f})
        for (oprt_dtype_t dt : kAllDtypes) {
            for (int64_t n : {int64_t(1), int64_t(3), int64_t(17), int64_t(33), int64_t(1023), int64_t(4097), kLarge})
                for (Layout l : {Layout::kContiguous, Layout::kOffset, Layout::kSliced}) {
                    Tensor in = make_layout(dt, {n}, l), out = make_layout(dt, {n}, l == Layout::kOffset ? Layout::kContiguous : l);
                    fill_uniform(in, rng_, -3, 3);
                    check_relu(out, in, slope, ctx_of("relu", out, &in, nullptr, "slope " + std::to_string(slope)));
                }
            for (const Shape &s : {Shape{2, 3, 5}, Shape{3, 17, 33}, Shape{2, 3, 4, 5}, Shape{}})
                for (Layout li : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced, Layout::kPermuted})
                    for (Layout lo : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced}) {
                        Tensor in = make_layout(dt, s, li), out = make_layout(dt, s, lo);
                        fill_uniform(in, rng_, -3, 3);
                        check_relu(out, in, slope, ctx_of("relu", out, &in, nullptr, "slope " + std::to_string(slope)));
                    }
            // Broadcast input and empty tensors.
            Tensor bin = make_tensor(dt, {4, 5}, {0, 1}), bout = make_tensor(dt, {4, 5}, {});
            fill_uniform(bin, rng_, -3, 3);
            check_relu(bout, bin, slope, ctx_of("relu broadcast", bout, &bin));
            Tensor ein = make_tensor(dt, {3, 0}, {}), eout = make_tensor(dt, {3, 0}, {});
            check_relu(eout, ein, slope, ctx_of("relu empty", eout, &ein));
        }
}

TEST_F(CpuOps, ReluSpecialValues) {
    for (float slope : {0.0f, 0.1f, -2.0f})
        for (oprt_dtype_t dt : kAllDtypes) {
            // slope 0 is the plain ReLU: relu(-inf) = 0 (the header documents this).
            std::vector<double> vals = {kNaN, kInf, -kInf, 0.0, -0.0, 1e-30, -1e-30, 1.0, -1.0, 65504.0, -65504.0};
            Tensor in = make_tensor(dt, {int64_t(vals.size())}, {}), out = make_tensor(dt, {int64_t(vals.size())}, {});
            in.set_values(vals);
            check_relu(out, in, slope, ctx_of("relu specials", out, &in, nullptr, "slope " + std::to_string(slope)));
        }
}

TEST_F(CpuOps, ReluInPlace) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (Layout l : {Layout::kContiguous, Layout::kSliced, Layout::kTransposed}) {
            Tensor t = make_layout(dt, {kLarge / 7, 7}, l);
            fill_uniform(t, rng_, -3, 3);
            const std::vector<double> want = ref_relu(t, -2.0f, dt);
            oprt_tensor_view_t v = t.view();
            std::string err;
            ASSERT_EQ(oprt_test::run_op(op_spec(OpKind::kRelu), v, &v, nullptr, t.data(), t.data(), nullptr,
                                        0, -2.0f, &err),
                      OPRT_SUCCESS)
                << err;
            const std::vector<double> got = t.values();
            const Tol tol = exact_tol(dt);
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_TRUE(close_enough(got[i], want[i], tol.atol, tol.rtol))
                    << t.describe() << " element " << i << ": expected " << want[i] << ", got " << got[i] << seed_note();
        }
}

// ---------------------------------------------------------------------------
// reduce_sum

TEST_F(CpuOps, ReduceSumEveryAxisBothForms) {
    const Shape shapes[] = {{5}, {3, 4, 5}, {2, 3, 4, 5}, {3, 17, 33}, {2, 1, 3, 1, 4}};
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Shape &s : shapes) {
            const int64_t nd = int64_t(s.size());
            for (int64_t axis = -nd; axis < nd; ++axis)
                for (bool keepdim : {false, true})
                    for (Layout li : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced, Layout::kPermuted})
                        for (Layout lo : {Layout::kContiguous, Layout::kSliced}) {
                            Tensor in = make_layout(dt, s, li), out = make_layout(dt, reduced_shape(s, axis, keepdim), lo);
                            fill_grid(in, rng_);
                            check_reduce(out, in, axis, true, ctx_of("reduce_sum", out, &in, nullptr, "axis " + std::to_string(axis)));
                        }
        }
}

TEST_F(CpuOps, ReduceSumOddLengths) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t n : kOddSizes)
            for (Layout l : {Layout::kContiguous, Layout::kSliced, Layout::kOffset}) {
                // Rows (last axis) and columns (first axis, an inner run of 7).
                Tensor rows = make_layout(dt, {7, n}, l), rows_out = make_layout(dt, {7}, Layout::kContiguous);
                fill_grid(rows, rng_);
                check_reduce(rows_out, rows, -1, true, ctx_of("reduce_sum rows", rows_out, &rows));
                Tensor cols = make_layout(dt, {n, 7}, l), cols_out = make_layout(dt, {1, 7}, Layout::kContiguous);
                fill_grid(cols, rng_);
                check_reduce(cols_out, cols, 0, true, ctx_of("reduce_sum cols", cols_out, &cols));
                // General (non-grid) data: accumulation error tolerated, relative to sum |x|.
                fill_uniform(rows, rng_, -1, 1);
                check_reduce(rows_out, rows, 1, false, ctx_of("reduce_sum rows (real data)", rows_out, &rows));
            }
}

TEST_F(CpuOps, ReduceSumEmptyAxisAndScalar) {
    for (oprt_dtype_t dt : kAllDtypes) {
        struct Case {
            Shape in;
            int64_t axis;
            bool keepdim;
        };
        const Case cases[] = {{{3, 0}, 1, false}, {{3, 0}, -1, true}, {{0}, 0, false}, {{0}, 0, true},
                              {{2, 0, 3}, 1, false}, {{2, 0, 3}, 1, true}, {{0, 4}, 1, false}, {{0, 4}, 0, false},
                              {{}, 0, false}, {{}, -1, false}, {{1}, 0, false}, {{5, 1}, 1, true}};
        for (const Case &c : cases) {
            Tensor in = make_tensor(dt, c.in, {}), out = make_tensor(dt, reduced_shape(c.in, c.axis, c.keepdim), {});
            fill_grid(in, rng_);
            check_reduce(out, in, c.axis, true, ctx_of("reduce_sum empty/scalar", out, &in, nullptr, "axis " + std::to_string(c.axis)));
        }
    }
}

TEST_F(CpuOps, ReduceSumFewVeryLongRows) {
    // outer (1 or 2) below the thread count and rows > 32768: threads split a row.
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Shape &s : {Shape{kLarge}, Shape{1, 70001}, Shape{2, 40961}})
            for (Layout l : {Layout::kContiguous, Layout::kSliced}) {
                Tensor in = make_layout(dt, s, l), out = make_layout(dt, reduced_shape(s, -1, false), Layout::kContiguous);
                fill_grid(in, rng_);
                check_reduce(out, in, -1, true, ctx_of("reduce_sum long rows", out, &in));
                fill_uniform(in, rng_, -1, 1);
                check_reduce(out, in, -1, false, ctx_of("reduce_sum long rows (real data)", out, &in));
            }
}

TEST_F(CpuOps, ReduceSumLongNonLastAxis) {
    // Large axis, small inner run, one outer block: threads split the axis. Inner runs one
    // past the 4096-output block, and three blocks evened out over the threads.
    struct Case {
        Shape in;
        int64_t axis;
    };
    const Case cases[] = {{{kLarge, 3}, 0}, {{kLarge, 1, 2}, 0}, {{1, 40000, 5}, 1}, {{2, 20000, 3}, -2},
                          {{40, 1500}, 0}, {{3, 300, 1100}, 1}, {{5000, 7}, 0}, {{7, 5000}, 0},
                          {{9, 4097}, 0}, {{19, 12289}, 0}, {{2, 9, 8193}, 1}};
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Case &c : cases)
            for (bool keepdim : {false, true}) {
                Tensor in = make_layout(dt, c.in, Layout::kContiguous),
                       out = make_layout(dt, reduced_shape(c.in, c.axis, keepdim), Layout::kContiguous);
                fill_grid(in, rng_);
                check_reduce(out, in, c.axis, true, ctx_of("reduce_sum non-last axis", out, &in, nullptr, "axis " + std::to_string(c.axis)));
            }
    // Real-valued data on the split path.
    Tensor in = make_layout(OPRT_DTYPE_F32, {kLarge, 3}, Layout::kContiguous), out = make_layout(OPRT_DTYPE_F32, {3}, Layout::kContiguous);
    fill_uniform(in, rng_, -1, 1);
    check_reduce(out, in, 0, false, ctx_of("reduce_sum split axis (real data)", out, &in));
}

TEST_F(CpuOps, ReduceSumManyRowsAndBroadcastInput) {
    for (oprt_dtype_t dt : kAllDtypes) {
        Tensor in = make_layout(dt, {5000, 9}, Layout::kContiguous), out = make_layout(dt, {5000}, Layout::kSliced);
        fill_grid(in, rng_);
        check_reduce(out, in, 1, true, ctx_of("reduce_sum many rows", out, &in));
        Tensor bin = make_tensor(dt, {6, 50}, {0, 1}), bout = make_tensor(dt, {6}, {});
        fill_grid(bin, rng_);
        check_reduce(bout, bin, 1, true, ctx_of("reduce_sum broadcast rows", bout, &bin));
        Tensor bout0 = make_tensor(dt, {50}, {});
        check_reduce(bout0, bin, 0, true, ctx_of("reduce_sum over a broadcast axis", bout0, &bin));
    }
}

TEST_F(CpuOps, ReduceSumSpecialValues) {
    for (oprt_dtype_t dt : kAllDtypes) {
        const std::vector<std::vector<double>> rows = {
            {1.0, kNaN, 2.0}, {1.0, kInf, 2.0}, {-kInf, 1.0, 3.0}, {kInf, -kInf, 0.0}, {0.5, -0.5, 0.25}};
        Tensor in = make_tensor(dt, {5, 3}, {}), out = make_tensor(dt, {5}, {});
        for (int r = 0; r < 5; ++r)
            for (int c = 0; c < 3; ++c) in.set_value(r * 3 + c, rows[size_t(r)][size_t(c)]);
        check_reduce(out, in, 1, true, ctx_of("reduce_sum specials", out, &in));
    }
}

// ---------------------------------------------------------------------------
// softmax

TEST_F(CpuOps, SoftmaxEveryAxis) {
    const Shape shapes[] = {{5}, {3, 4, 5}, {2, 3, 4, 5}, {3, 17, 33}, {2, 1, 3, 1, 4}};
    for (oprt_dtype_t dt : kAllDtypes)
        for (const Shape &s : shapes) {
            const int64_t nd = int64_t(s.size());
            for (int64_t axis = -nd; axis < nd; ++axis)
                for (Layout li : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced, Layout::kPermuted})
                    for (Layout lo : {Layout::kContiguous, Layout::kTransposed, Layout::kSliced}) {
                        Tensor in = make_layout(dt, s, li), out = make_layout(dt, s, lo);
                        fill_uniform(in, rng_, -4, 4);
                        check_softmax(out, in, axis, ctx_of("softmax", out, &in, nullptr, "axis " + std::to_string(axis)));
                    }
        }
}

TEST_F(CpuOps, SoftmaxOddRowLengths) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t n : kOddSizes)
            for (Layout l : {Layout::kContiguous, Layout::kSliced, Layout::kOffset}) {
                Tensor rows = make_layout(dt, {3, n}, l), rows_out = make_layout(dt, {3, n}, l);
                fill_uniform(rows, rng_, -4, 4);
                check_softmax(rows_out, rows, -1, ctx_of("softmax rows", rows_out, &rows));
                Tensor cols = make_layout(dt, {n, 3}, l), cols_out = make_layout(dt, {n, 3}, Layout::kContiguous);
                fill_uniform(cols, rng_, -4, 4);
                check_softmax(cols_out, cols, 0, ctx_of("softmax cols", cols_out, &cols));
            }
}

TEST_F(CpuOps, SoftmaxLongRowsStreaming) {
    // 2^18 is the last buffered row; longer rows stream in 2048-element chunks.
    const int64_t lengths[] = {16385, 262143, 262144, 262145, 2048 * 129, 2048 * 130 - 1};
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t n : lengths) {
            const int64_t rows = n > 262144 ? 1 : 2;
            Tensor in = make_layout(dt, {rows, n}, Layout::kContiguous), out = make_layout(dt, {rows, n}, Layout::kContiguous);
            fill_uniform(in, rng_, -4, 4);
            check_softmax(out, in, -1, ctx_of("softmax long rows", out, &in));
        }
    // Strided long rows: the axis first (inner run of 2), and a sliced row.
    for (oprt_dtype_t dt : kAllDtypes) {
        Tensor in = make_layout(dt, {2048 * 129 + 5, 2}, Layout::kContiguous), out = make_layout(dt, {2048 * 129 + 5, 2}, Layout::kSliced);
        fill_uniform(in, rng_, -4, 4);
        check_softmax(out, in, 0, ctx_of("softmax long strided axis", out, &in));
        Tensor sin = make_layout(dt, {2, 270000}, Layout::kSliced), sout = make_layout(dt, {2, 270000}, Layout::kTransposed);
        fill_uniform(sin, rng_, -4, 4);
        check_softmax(sout, sin, 1, ctx_of("softmax long sliced rows", sout, &sin));
    }
}

TEST_F(CpuOps, SoftmaxManyRows) {
    for (oprt_dtype_t dt : kAllDtypes) {
        Tensor in = make_layout(dt, {5000, 13}, Layout::kContiguous), out = make_layout(dt, {5000, 13}, Layout::kContiguous);
        fill_uniform(in, rng_, -4, 4);
        check_softmax(out, in, 1, ctx_of("softmax many rows", out, &in));
        Tensor in2 = make_layout(dt, {13, 5000}, Layout::kContiguous), out2 = make_layout(dt, {13, 5000}, Layout::kContiguous);
        fill_uniform(in2, rng_, -4, 4);
        check_softmax(out2, in2, 0, ctx_of("softmax many columns", out2, &in2));
    }
}

// Rows of special values; `len` chooses the buffered (short) or streaming (long) kernel.
void check_softmax_special_rows(oprt_dtype_t dt, int64_t len, std::mt19937 &rng) {
    std::uniform_real_distribution<double> u(-4, 4);
    const double big = dt == OPRT_DTYPE_F16 ? 60000.0 : 1e4;
    std::vector<std::pair<std::string, std::vector<double>>> rows;
    auto row = [&](const std::string &name, auto fn) {
        std::vector<double> r(static_cast<size_t>(len));
        for (int64_t k = 0; k < len; ++k) r[size_t(k)] = fn(k);
        rows.push_back({name, r});
    };
    row("NaN in the middle", [&](int64_t k) { return k == len / 2 ? kNaN : u(rng); });
    row("NaN last", [&](int64_t k) { return k == len - 1 ? kNaN : u(rng); });
    row("some -inf", [&](int64_t k) { return k % 3 == 1 ? -kInf : u(rng); });
    row("all -inf", [&](int64_t) { return -kInf; });
    row("one +inf", [&](int64_t k) { return k == len / 3 ? kInf : u(rng); });
    row("+inf and -inf", [&](int64_t k) { return k == 0 ? -kInf : k == len - 1 ? kInf : u(rng); });
    row("all equal", [&](int64_t) { return 0.75; });
    row("large values", [&](int64_t k) { return big - double(k % 5) * (big / 1000); });
    row("one finite among -inf", [&](int64_t k) { return k == len - 2 ? 1.5 : -kInf; });
    // A masked prefix longer than a streaming chunk (2048): exp(-inf - -inf) must not poison the row.
    row("leading -inf block", [&](int64_t k) { return k < (len * 3) / 4 ? -kInf : u(rng); });
    row("trailing -inf block", [&](int64_t k) { return k >= len / 4 ? -kInf : u(rng); });
    for (const auto &r : rows)
        for (Layout l : {Layout::kContiguous, Layout::kTransposed}) {  // dense and strided rows
            Tensor in = make_layout(dt, {2, len}, l), out = make_tensor(dt, {2, len}, {});
            std::vector<double> v = r.second;
            for (int64_t k = 0; k < len; ++k) v.push_back(u(rng));  // a normal second row next to it
            in.set_values(v);
            check_softmax(out, in, 1, ctx_of("softmax special row", out, &in, nullptr, r.first));
        }
}

TEST_F(CpuOps, SoftmaxSpecialRowsBuffered) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (int64_t len : {int64_t(1), int64_t(2), int64_t(7), int64_t(33), int64_t(3000)})
            check_softmax_special_rows(dt, len, rng_);
}

TEST_F(CpuOps, SoftmaxSpecialRowsStreaming) {
    for (oprt_dtype_t dt : kAllDtypes) check_softmax_special_rows(dt, 270000, rng_);
}

TEST_F(CpuOps, SoftmaxScalarEmptyAndBroadcast) {
    for (oprt_dtype_t dt : kAllDtypes) {
        for (double x : {1.5, -kInf, kInf, kNaN})
            for (int64_t axis : {0, -1}) {
                Tensor in = make_tensor(dt, {}, {}), out = make_tensor(dt, {}, {});
                in.set_value(0, x);
                check_softmax(out, in, axis, ctx_of("softmax 0-d", out, &in, nullptr, "x " + std::to_string(x)));
            }
        for (const Shape &s : {Shape{0}, Shape{3, 0}, Shape{0, 5}}) {
            Tensor in = make_tensor(dt, s, {}), out = make_tensor(dt, s, {});
            check_softmax(out, in, -1, ctx_of("softmax empty", out, &in));
        }
        for (int64_t axis : {0, 1}) {
            Tensor in = make_tensor(dt, {3, 5}, {0, 1}), out = make_tensor(dt, {3, 5}, {});
            fill_uniform(in, rng_, -4, 4);
            check_softmax(out, in, axis, ctx_of("softmax broadcast input", out, &in, nullptr, "axis " + std::to_string(axis)));
            Tensor in2 = make_tensor(dt, {3, 5}, {1, 0}), out2 = make_tensor(dt, {3, 5}, {});
            fill_uniform(in2, rng_, -4, 4);
            check_softmax(out2, in2, axis, ctx_of("softmax broadcast input", out2, &in2, nullptr, "axis " + std::to_string(axis)));
        }
    }
}

// ---------------------------------------------------------------------------
// Descriptor lifecycle: execute needs nothing but the descriptor and buffers.

struct LifecycleCase {
    OpKind kind;
    Shape out, in0, in1;
    int64_t axis;
    float slope;
};

const LifecycleCase kLifecycleCases[] = {
    {OpKind::kCopy, {33, 17}, {33, 17}, {}, 0, 0.0f},
    {OpKind::kVectorAdd, {33, 17}, {33, 17}, {17}, 0, 0.0f},
    {OpKind::kRelu, {33, 17}, {33, 17}, {}, 0, 0.1f},
    {OpKind::kReduceSum, {33}, {33, 17}, {}, -1, 0.0f},
    {OpKind::kSoftmax, {33, 17}, {33, 17}, {}, 0, 0.0f},
};

std::vector<double> reference(const LifecycleCase &c, const Tensor &in0, const Tensor *in1, oprt_dtype_t dt) {
    switch (c.kind) {
    case OpKind::kCopy: return in0.values();
    case OpKind::kVectorAdd: return ref_add(in0, *in1, c.out, dt);
    case OpKind::kRelu: return ref_relu(in0, c.slope, dt);
    case OpKind::kReduceSum: {
        std::vector<double> s, a;
        ref_reduce(in0, c.axis, &s, &a);
        return rounded(dt, s);
    }
    case OpKind::kSoftmax: return ref_softmax(in0, c.axis);
    }
    return {};
}

Tol lifecycle_tol(const LifecycleCase &c, oprt_dtype_t dt) {
    return c.kind == OpKind::kSoftmax ? softmax_tol(dt, 33) : exact_tol(dt);
}

TEST_F(CpuOps, DescriptorReusedOnDifferentBuffers) {
    for (oprt_dtype_t dt : kAllDtypes)
        for (const LifecycleCase &c : kLifecycleCases) {
            const OpSpec &op = op_spec(c.kind);
            SCOPED_TRACE(std::string(op.name) + " " + oprt_dtype_string(dt));
            const bool two = !c.in1.empty();
            // Create from views whose data pointers are NULL: the descriptor is layout only.
            const oprt_tensor_view_t vo = make_view(dt, c.out), v0 = make_view(dt, c.in0),
                                     v1 = two ? make_view(dt, c.in1) : oprt_tensor_view_t{};
            void *desc = nullptr;
            ASSERT_EQ(op.create(&desc, &vo, &v0, two ? &v1 : nullptr, c.axis, c.slope), OPRT_SUCCESS)
                << oprt_last_error_message();
            size_t ws_size = 0;
            ASSERT_EQ(op.workspace(desc, &ws_size), OPRT_SUCCESS);
            std::vector<unsigned char> ws(ws_size);
            for (int round = 0; round < 3; ++round) {
                // Fresh buffers each time; the previous round's are already freed.
                auto out = std::make_unique<Tensor>(make_tensor(dt, c.out, {}));
                auto in0 = std::make_unique<Tensor>(make_tensor(dt, c.in0, {}));
                auto in1 = std::make_unique<Tensor>(make_tensor(dt, two ? c.in1 : Shape{1}, {}));
                if (c.kind == OpKind::kReduceSum) fill_grid(*in0, rng_); else fill_uniform(*in0, rng_, -3, 3);
                fill_uniform(*in1, rng_, -3, 3);
                poison(*out);
                ASSERT_EQ(op.execute(desc, ws_size ? ws.data() : nullptr, ws_size, out->data(), in0->data(),
                                     two ? in1->data() : nullptr),
                          OPRT_SUCCESS)
                    << oprt_last_error_message();
                if (c.kind == OpKind::kCopy) {
                    check_bits(*out, ref_copy_bits(*in0, c.out), "copy reuse round " + std::to_string(round));
                } else {
                    check_output(*out, reference(c, *in0, two ? in1.get() : nullptr, dt), lifecycle_tol(c, dt),
                                 std::string(op.name) + " reuse round " + std::to_string(round));
                }
            }
            EXPECT_EQ(op.destroy(desc), OPRT_SUCCESS);
        }
}

TEST_F(CpuOps, DescriptorOutlivesTheViewsItWasCreatedFrom) {
    for (const LifecycleCase &c : kLifecycleCases) {
        const OpSpec &op = op_spec(c.kind);
        SCOPED_TRACE(op.name);
        const bool two = !c.in1.empty();
        const oprt_dtype_t dt = OPRT_DTYPE_F32;
        Tensor out = make_tensor(dt, c.out, {}), in0 = make_tensor(dt, c.in0, {}),
               in1 = make_tensor(dt, two ? c.in1 : Shape{1}, {});
        if (c.kind == OpKind::kReduceSum) fill_grid(in0, rng_); else fill_uniform(in0, rng_, -3, 3);
        fill_uniform(in1, rng_, -3, 3);
        void *desc = nullptr;
        {
            // The views live on the heap and are scribbled over and freed before execute.
            auto views = std::make_unique<oprt_tensor_view_t[]>(3);
            views[0] = out.view();
            views[1] = in0.view();
            views[2] = in1.view();
            ASSERT_EQ(op.create(&desc, &views[0], &views[1], two ? &views[2] : nullptr, c.axis, c.slope),
                      OPRT_SUCCESS)
                << oprt_last_error_message();
            std::memset(views.get(), 0xab, 3 * sizeof(oprt_tensor_view_t));
        }
        poison(out);
        ASSERT_EQ(op.execute(desc, nullptr, 0, out.data(), in0.data(), two ? in1.data() : nullptr), OPRT_SUCCESS)
            << oprt_last_error_message();
        ASSERT_EQ(op.destroy(desc), OPRT_SUCCESS);  // right after execute, before looking at out
        if (c.kind == OpKind::kCopy)
            check_bits(out, ref_copy_bits(in0, c.out), "copy");
        else
            check_output(out, reference(c, in0, two ? &in1 : nullptr, dt), lifecycle_tol(c, dt), op.name);
    }
}

}  // namespace
