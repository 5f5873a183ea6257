// Every bad input of the contract, tried directly on the C API of every
// operator: the exact status, a message that names the operator and the
// argument, and no crash. The valid neighbours of each bad input are checked
// too, so a check cannot pass by rejecting everything.
#include <gtest/gtest.h>

#include <cctype>
#include <climits>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {

using oprt_test::all_ops;
using oprt_test::BackendGuard;
using oprt_test::make_view;
using oprt_test::OpKind;
using oprt_test::OpSpec;
using oprt_test::raw_enum;

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` occurs in `text` delimited by non-identifier characters.
bool contains_word(const std::string &text, const std::string &word) {
    for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
        const bool left_ok = pos == 0 || !is_ident_char(text[pos - 1]);
        const size_t end = pos + word.size();
        const bool right_ok = end >= text.size() || !is_ident_char(text[end]);
        if (left_ok && right_ok) return true;
    }
    return false;
}

// The call returned `want`, and the thread's message is non-empty, contains
// `op` (the operator's name, as a substring: it sits inside the function
// name) and every word of `words` as a whole word.
::testing::AssertionResult FailsWith(oprt_status_t got, oprt_status_t want, const std::string &op,
                                     const std::vector<std::string> &words) {
    const std::string msg = oprt_last_error_message() ? oprt_last_error_message() : "<NULL>";
    if (got != want)
        return ::testing::AssertionFailure()
               << "status " << oprt_status_string(got) << " (" << int(got) << "), expected "
               << oprt_status_string(want) << "; message: \"" << msg << "\"";
    if (msg.empty()) return ::testing::AssertionFailure() << "empty oprt_last_error_message()";
    if (msg.find(op) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message does not name the operator '" << op << "': \"" << msg << "\"";
    for (const std::string &w : words)
        if (!contains_word(msg, w))
            return ::testing::AssertionFailure()
                   << "message does not name '" << w << "': \"" << msg << "\"";
    return ::testing::AssertionSuccess() << msg;
}

#define EXPECT_OK(call)                                                              \
    do {                                                                             \
        const oprt_status_t s_ = (call);                                             \
        EXPECT_EQ(s_, OPRT_SUCCESS) << oprt_status_string(s_) << ": "                \
                                    << oprt_last_error_message();                    \
    } while (0)

const OpSpec &spec(OpKind kind) { return oprt_test::op_spec(kind); }

std::string op_label(const ::testing::TestParamInfo<OpKind> &info) { return spec(info.param).name; }

// A valid set of arguments for one operator: views[0] is out, then inputs.
struct Args {
    oprt_tensor_view_t views[3];
    int64_t axis = 1;
    float slope = 0.1f;
};

class ApiErrors : public ::testing::TestWithParam<OpKind> {
protected:
    void SetUp() override {
        // Validation is backend-agnostic; pin CPU so AUTO never picks a GPU for host pointers.
        guard_ = std::make_unique<BackendGuard>(OPRT_BACKEND_CPU);
    }
    void TearDown() override { guard_.reset(); }

    const OpSpec &op() const { return spec(GetParam()); }
    int num_views() const { return op().num_inputs + 1; }
    bool is_reduce() const { return GetParam() == OpKind::kReduceSum; }

    // in (3, 4); out (3, 4), or (3) for reduce_sum over axis 1.
    Args valid(oprt_dtype_t dtype = OPRT_DTYPE_F32) const {
        Args a;
        a.views[0] = make_view(dtype, is_reduce() ? std::vector<int64_t>{3} : std::vector<int64_t>{3, 4});
        a.views[1] = make_view(dtype, {3, 4});
        a.views[2] = make_view(dtype, {3, 4});
        return a;
    }

    // Creates with `args`; views listed in `null_views` are passed as NULL.
    // On failure checks that *desc came back NULL; on success destroys it.
    oprt_status_t create(const Args &args, std::set<int> null_views = {}) {
        const oprt_tensor_view_t *v[3];
        for (int k = 0; k < 3; ++k) v[k] = null_views.count(k) ? nullptr : &args.views[k];
        static int sentinel;
        void *desc = &sentinel;  // must be overwritten either way
        const oprt_status_t s = op().create(&desc, v[0], v[1], op().num_inputs > 1 ? v[2] : nullptr,
                                            args.axis, args.slope);
        if (s != OPRT_SUCCESS) {
            EXPECT_EQ(desc, nullptr) << "a failed create must leave *desc NULL";
        } else {
            EXPECT_NE(desc, nullptr);
            EXPECT_NE(desc, &sentinel);
            if (desc != nullptr && desc != &sentinel) {
                EXPECT_EQ(op().destroy(desc), OPRT_SUCCESS);
            }
        }
        return s;
    }

    // Creates a descriptor that must succeed (caller destroys it).
    void *create_ok(const Args &args) {
        void *desc = nullptr;
        const oprt_status_t s = op().create(&desc, &args.views[0], &args.views[1],
                                            op().num_inputs > 1 ? &args.views[2] : nullptr,
                                            args.axis, args.slope);
        EXPECT_EQ(s, OPRT_SUCCESS) << oprt_last_error_message();
        return s == OPRT_SUCCESS ? desc : nullptr;
    }

    ::testing::AssertionResult CreateFails(const Args &args, oprt_status_t want,
                                           const std::vector<std::string> &words,
                                           std::set<int> null_views = {}) {
        const oprt_status_t s = create(args, null_views);
        return FailsWith(s, want, op().name, words);
    }

    std::unique_ptr<BackendGuard> guard_;
};

// Fixtures for the checks that concern only some operators.
class ElementwiseApiErrors : public ApiErrors {};
class AxisApiErrors : public ApiErrors {};
class ReduceSumApiErrors : public ApiErrors {};
class SoftmaxApiErrors : public ApiErrors {};
class ReluApiErrors : public ApiErrors {};

// ---------------------------------------------------------------------------
// Creation: pointers, views, dtypes, shapes, axis.

TEST_P(ApiErrors, ValidArgumentsAreAccepted) {
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_F32, OPRT_DTYPE_BF16})
        EXPECT_OK(create(valid(dt)));
}

TEST_P(ApiErrors, NullDescriptorOutPointer) {
    const Args a = valid();
    const oprt_status_t s = op().create(nullptr, &a.views[0], &a.views[1],
                                        op().num_inputs > 1 ? &a.views[2] : nullptr, a.axis, a.slope);
    EXPECT_TRUE(FailsWith(s, OPRT_ERR_INVALID_ARG, op().name, {"desc"}));
}

TEST_P(ApiErrors, NullViews) {
    for (int k = 0; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        EXPECT_TRUE(CreateFails(valid(), OPRT_ERR_INVALID_ARG, {op().args[k]}, {k}));
    }
    // Every view NULL at once: still a clean failure.
    EXPECT_TRUE(FailsWith(create(valid(), {0, 1, 2}), OPRT_ERR_INVALID_ARG, op().name, {}));
}

TEST_P(ApiErrors, NdimOutsideZeroToEight) {
    for (int k = 0; k < num_views(); ++k) {
        for (int32_t ndim : {-1, 9, 100, INT32_MIN}) {
            SCOPED_TRACE(std::string(op().args[k]) + " ndim " + std::to_string(ndim));
            Args a = valid();
            a.views[k].ndim = ndim;
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k], "ndim"}));
        }
    }
}

TEST_P(ApiErrors, NegativeShape) {
    for (int k = 0; k < num_views(); ++k) {
        for (int64_t bad : {int64_t(-1), int64_t(-3), INT64_MIN}) {
            SCOPED_TRACE(std::string(op().args[k]) + " shape[0] " + std::to_string(bad));
            Args a = valid();
            a.views[k].shape[0] = bad;
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k], "shape"}));
        }
    }
}

TEST_P(ApiErrors, NegativeStride) {
    for (int k = 0; k < num_views(); ++k) {
        for (int64_t bad : {int64_t(-1), int64_t(-4), INT64_MIN}) {
            SCOPED_TRACE(std::string(op().args[k]) + " strides[0] " + std::to_string(bad));
            Args a = valid();
            a.views[k].strides[0] = bad;
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k], "strides"}));
        }
    }
}

TEST_P(ApiErrors, ElementCountOverflowsInt64) {
    const int64_t big = int64_t(1) << 21;  // big^3 = 2^63: one past INT64_MAX
    for (int k = 0; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        Args a = valid();
        a.views[k] = make_view(OPRT_DTYPE_F32, {big, big, big}, {0, 0, 0});
        EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k]}));
        a.views[k] = make_view(OPRT_DTYPE_F32, {INT64_MAX, 2}, {1, 0});
        EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k]}));
    }
}

TEST_P(ApiErrors, SpanOverflowsInt64) {
    // Every view (2, 3) apart from the bad one, so nothing else can reject the
    // arguments: in (3, 2); out (3, 2), or (3) for reduce_sum over axis -1.
    auto consistent = [&] {
        Args a;
        a.views[0] = make_view(OPRT_DTYPE_F32, is_reduce() ? std::vector<int64_t>{3} : std::vector<int64_t>{3, 2});
        a.views[1] = make_view(OPRT_DTYPE_F32, {3, 2});
        a.views[2] = make_view(OPRT_DTYPE_F32, {3, 2});
        a.axis = -1;
        return a;
    };
    EXPECT_OK(create(consistent()));
    const int64_t e62 = int64_t(1) << 62, e61 = int64_t(1) << 61;
    for (oprt_dtype_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_F16}) {
        for (int k = 0; k < num_views(); ++k) {
            SCOPED_TRACE(std::string(op().args[k]) + " " + oprt_dtype_string(dt));
            const bool one_d = k == 0 && is_reduce();
            auto with = [&](std::vector<int64_t> strides) {
                Args a = consistent();
                for (int j = 0; j < 3; ++j) a.views[j].dtype = dt;
                if (one_d) strides.pop_back();
                for (size_t d = 0; d < strides.size(); ++d) a.views[k].strides[d] = strides[d];
                return a;
            };
            // (3 - 1) * 2^62 overflows the element offset.
            EXPECT_TRUE(CreateFails(with({e62, 1}), OPRT_ERR_INVALID_ARG, {op().args[k]}));
            // Each dim's reach fits, their sum does not.
            if (!one_d) {
                EXPECT_TRUE(CreateFails(with({e62 - 1, 4}), OPRT_ERR_INVALID_ARG, {op().args[k]}));
                // ...and their sum wraps around to a small negative number.
                EXPECT_TRUE(CreateFails(with({e62 - 1, INT64_MAX}), OPRT_ERR_INVALID_ARG, {op().args[k]}));
            }
            // The element offset fits, the byte offset does not.
            EXPECT_TRUE(CreateFails(with({e61, 1}), OPRT_ERR_INVALID_ARG, {op().args[k]}));
            // Large but addressable strides are fine at creation.
            EXPECT_OK(create(with({int64_t(1) << 40, int64_t(1) << 20})));
        }
    }
    // An empty tensor reaches nothing, whatever its strides.
    Args a = consistent();
    for (int k = 0; k < num_views(); ++k) {
        a.views[k].shape[0] = 0;
        a.views[k].strides[0] = INT64_MAX;
    }
    EXPECT_OK(create(a));
}

TEST_P(ApiErrors, UnknownDtype) {
    for (int k = 0; k < num_views(); ++k) {
        for (int bad : {7, 3, -1, 1000}) {
            SCOPED_TRACE(std::string(op().args[k]) + " dtype " + std::to_string(bad));
            Args a = valid();
            a.views[k].dtype = raw_enum<oprt_dtype_t>(bad);
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_UNSUPPORTED_DTYPE, {op().args[k], "dtype"}));
        }
    }
}

TEST_P(ApiErrors, MismatchedDtypes) {
    // Each input differs from out.
    for (int k = 1; k < num_views(); ++k) {
        for (oprt_dtype_t other : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
            SCOPED_TRACE(std::string(op().args[k]) + " dtype " + oprt_dtype_string(other));
            Args a = valid();
            a.views[k].dtype = other;
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k], "dtype"}));
        }
    }
    // out differs from every input; f16 vs bf16 (same size) is a mismatch too.
    Args a = valid(OPRT_DTYPE_BF16);
    a.views[0].dtype = OPRT_DTYPE_F16;
    EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[0], "dtype"}));
}

TEST_P(ElementwiseApiErrors, ElementwiseShapesMustBroadcastToOut) {
    for (int k = 1; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        for (const std::vector<int64_t> &bad : std::vector<std::vector<int64_t>>{
                 {3, 5}, {4, 3}, {2, 3, 4}, {3}, {5}, {12}, {3, 4, 1}, {2, 1}}) {
            Args a = valid();
            a.views[k] = make_view(OPRT_DTYPE_F32, bad);
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[k]}))
                << "input shape of " << bad.size() << " dims";
        }
        for (const std::vector<int64_t> &good : std::vector<std::vector<int64_t>>{
                 {3, 4}, {1, 4}, {4}, {3, 1}, {1, 1}, {1}, {}, {1, 3, 4}, {1, 1, 1, 4}}) {
            Args a = valid();
            a.views[k] = make_view(OPRT_DTYPE_F32, good);
            EXPECT_OK(create(a));
        }
    }
    // out must be the broadcast shape itself: inputs never broadcast out.
    Args a = valid();
    a.views[0] = make_view(OPRT_DTYPE_F32, {1, 4});
    EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {}));
    a.views[0] = make_view(OPRT_DTYPE_F32, {4});
    EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {}));
}

TEST_P(SoftmaxApiErrors, SoftmaxOutShapeMustEqualIn) {
    for (const std::vector<int64_t> &bad : std::vector<std::vector<int64_t>>{
             {3, 5}, {4, 3}, {12}, {3, 4, 1}, {1, 3, 4}, {3}, {}, {3, 1}}) {
        Args a = valid();
        a.views[0] = make_view(OPRT_DTYPE_F32, bad);
        EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {"out"})) << bad.size() << "-d out";
    }
}

TEST_P(ReduceSumApiErrors, ReduceSumOutShapes) {
    using Shape = std::vector<int64_t>;
    struct Case {
        Shape in;
        int64_t axis;
        std::vector<Shape> good, bad;
    };
    const std::vector<Case> cases = {
        {{3, 4, 5}, 1, {{3, 5}, {3, 1, 5}},
         {{3, 4, 5}, {3, 5, 1}, {1, 3, 5}, {5, 3}, {3, 6}, {15}, {3, 1, 6}, {3, 4}, {}, {3, 1, 1, 5},
          {4, 5}}},
        {{3, 4, 5}, -2, {{3, 5}, {3, 1, 5}}, {{3, 4, 5}, {3, 4}}},
        {{3, 4, 5}, 0, {{4, 5}, {1, 4, 5}}, {{3, 5}, {3, 4, 5}, {4, 1, 5}, {4, 5, 1}}},
        {{3, 4, 5}, -1, {{3, 4}, {3, 4, 1}}, {{3, 5}, {3, 4, 5}, {1, 3, 4}, {4, 5}}},
        {{3, 4, 5}, -3, {{4, 5}, {1, 4, 5}}, {{3, 4}}},
        {{4}, 0, {{}, {1}}, {{4}, {2}, {1, 1}}},
        {{4}, -1, {{}, {1}}, {{4}}},
        {{}, 0, {{}}, {{2}}},
        {{}, -1, {{}}, {{2}}},
        {{3, 1}, 0, {{1}, {1, 1}}, {{3}, {3, 1}}},
    };
    for (const Case &c : cases) {
        for (const Shape &out : c.good) {
            SCOPED_TRACE("in " + std::to_string(c.in.size()) + "-d, axis " + std::to_string(c.axis) +
                         ", good out of " + std::to_string(out.size()) + " dims");
            Args a;
            a.views[0] = make_view(OPRT_DTYPE_F32, out);
            a.views[1] = make_view(OPRT_DTYPE_F32, c.in);
            a.axis = c.axis;
            EXPECT_OK(create(a));
        }
        for (size_t i = 0; i < c.bad.size(); ++i) {
            SCOPED_TRACE("in " + std::to_string(c.in.size()) + "-d, axis " + std::to_string(c.axis) +
                         ", bad out #" + std::to_string(i));
            Args a;
            a.views[0] = make_view(OPRT_DTYPE_F32, c.bad[i]);
            a.views[1] = make_view(OPRT_DTYPE_F32, c.in);
            a.axis = c.axis;
            EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {"out"}));
        }
    }
}

TEST_P(AxisApiErrors, AxisOutOfRange) {
    auto args_for = [&](const std::vector<int64_t> &in, int64_t axis) {
        Args a;
        std::vector<int64_t> out = in;
        if (is_reduce() && !in.empty()) {
            const int64_t n = int64_t(in.size());
            const int64_t ax = axis < 0 ? axis + n : axis;
            if (ax >= 0 && ax < n) out.erase(out.begin() + ax);
            else out.pop_back();
        }
        a.views[0] = make_view(OPRT_DTYPE_F32, out);
        a.views[1] = make_view(OPRT_DTYPE_F32, in);
        a.axis = axis;
        return a;
    };
    for (int64_t axis : {-2, -1, 0, 1}) {
        SCOPED_TRACE("good axis " + std::to_string(axis));
        EXPECT_OK(create(args_for({3, 4}, axis)));
    }
    for (int64_t axis : {int64_t(2), int64_t(-3), int64_t(8), int64_t(-9), INT64_MAX, INT64_MIN}) {
        SCOPED_TRACE("bad axis " + std::to_string(axis));
        EXPECT_TRUE(CreateFails(args_for({3, 4}, axis), OPRT_ERR_INVALID_ARG, {"axis"}));
    }
    // A 0-d input behaves as one element along axis 0 / -1.
    for (int64_t axis : {0, -1}) EXPECT_OK(create(args_for({}, axis)));
    for (int64_t axis : {1, -2})
        EXPECT_TRUE(CreateFails(args_for({}, axis), OPRT_ERR_INVALID_ARG, {"axis"}));
    // 8-d: the last valid axes.
    const std::vector<int64_t> in8 = {1, 2, 1, 2, 1, 2, 1, 3};
    for (int64_t axis : {-8, 7}) EXPECT_OK(create(args_for(in8, axis)));
    for (int64_t axis : {-9, 8})
        EXPECT_TRUE(CreateFails(args_for(in8, axis), OPRT_ERR_INVALID_ARG, {"axis"}));
}

TEST_P(ReluApiErrors, ReluNegativeSlopeNaN) {
    Args a = valid();
    a.slope = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {"negative_slope"}));
    for (float slope : {0.0f, 0.1f, -2.0f, 1.0f, 1e30f}) {
        a.slope = slope;
        EXPECT_OK(create(a));
    }
}

TEST_P(ApiErrors, OutputWithZeroStrideOnDimAboveOne) {
    Args a = valid();
    if (is_reduce()) {
        a.views[0].strides[0] = 0;  // out (3) with stride 0
    } else {
        a.views[0].strides[1] = 0;  // out (3, 4) with strides (4, 0)
    }
    EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[0], "strides"}));
    a = valid();
    a.views[0].strides[0] = 0;
    if (!is_reduce()) {
        EXPECT_TRUE(CreateFails(a, OPRT_ERR_INVALID_ARG, {op().args[0], "strides"}));
    }
    // A size-1 dim may have any stride, 0 included.
    a = valid();
    if (is_reduce()) {
        a.views[0] = make_view(OPRT_DTYPE_F32, {3, 1}, {1, 0});  // keepdim form
    } else {
        a.views[0] = make_view(OPRT_DTYPE_F32, {3, 1, 4}, {4, 0, 1});
        for (int k = 1; k < num_views(); ++k) a.views[k] = make_view(OPRT_DTYPE_F32, {3, 1, 4});
    }
    EXPECT_OK(create(a));
}

TEST_P(ApiErrors, OutputWithOverlappingElements) {
    // out is (3, 4) for every operator here (reduce_sum: in (3, 4, 5), axis -1).
    auto args_with_out = [&](std::vector<int64_t> strides) {
        Args a = valid();
        a.views[0] = make_view(OPRT_DTYPE_F32, {3, 4}, strides);
        if (is_reduce()) {
            a.views[1] = make_view(OPRT_DTYPE_F32, {3, 4, 5});
            a.axis = -1;
        }
        return a;
    };
    for (const std::vector<int64_t> &bad :
         std::vector<std::vector<int64_t>>{{2, 1}, {1, 1}, {3, 1}, {1, 2}, {2, 2}, {4, 2}}) {
        SCOPED_TRACE("out strides (" + std::to_string(bad[0]) + ", " + std::to_string(bad[1]) + ")");
        EXPECT_TRUE(CreateFails(args_with_out(bad), OPRT_ERR_INVALID_ARG, {op().args[0]}));
    }
    // Non-overlapping layouts are fine: dense, transposed, padded.
    for (const std::vector<int64_t> &good :
         std::vector<std::vector<int64_t>>{{4, 1}, {1, 3}, {5, 1}, {8, 2}, {1, 4}, {2, 6}}) {
        SCOPED_TRACE("out strides (" + std::to_string(good[0]) + ", " + std::to_string(good[1]) + ")");
        EXPECT_OK(create(args_with_out(good)));
    }
}

TEST_P(ApiErrors, DataPointersAreNotNeededAtCreation) {
    Args a = valid();  // make_view leaves data NULL
    for (int k = 0; k < 3; ++k) ASSERT_EQ(a.views[k].data, nullptr);
    EXPECT_OK(create(a));
}

// ---------------------------------------------------------------------------
// Workspace, destroy, execute.

TEST_P(ApiErrors, WorkspaceQueries) {
    void *desc = create_ok(valid());
    ASSERT_NE(desc, nullptr);
    size_t size = 12345;
    EXPECT_OK(op().workspace(desc, &size));
    EXPECT_EQ(size, 0u) << "the CPU backend needs no workspace";
    EXPECT_TRUE(FailsWith(op().workspace(desc, nullptr), OPRT_ERR_INVALID_ARG, op().name, {"size"}));
    size = 777;
    EXPECT_TRUE(FailsWith(op().workspace(nullptr, &size), OPRT_ERR_INVALID_ARG, op().name, {"desc"}));
    EXPECT_EQ(size, 777u) << "a failed query must not write *size";
    EXPECT_TRUE(FailsWith(op().workspace(nullptr, nullptr), OPRT_ERR_INVALID_ARG, op().name, {}));

    std::vector<float> in0(12, 1.0f), in1(12, 2.0f), out(12);
    // No workspace needed: NULL with size 0 runs, and so does a spare buffer.
    EXPECT_OK(op().execute(desc, nullptr, 0, out.data(), in0.data(), in1.data()));
    std::vector<unsigned char> spare(64);
    EXPECT_OK(op().execute(desc, spare.data(), spare.size(), out.data(), in0.data(), in1.data()));
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, WorkspaceTooSmall) {
    // Needs a descriptor with a workspace: none on the CPU backend, so this
    // only bites in a build whose backend asks for one.
    void *desc = create_ok(valid());
    ASSERT_NE(desc, nullptr);
    size_t size = 0;
    ASSERT_EQ(op().workspace(desc, &size), OPRT_SUCCESS);
    if (size > 0) {
        std::vector<unsigned char> ws(size);
        std::vector<float> in0(12, 1.0f), in1(12, 2.0f), out(12);
        EXPECT_TRUE(FailsWith(
            op().execute(desc, ws.data(), size - 1, out.data(), in0.data(), in1.data()),
            OPRT_ERR_INSUFFICIENT_WORKSPACE, op().name, {"workspace_size"}));
        EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, size, out.data(), in0.data(), in1.data()),
                              OPRT_ERR_INVALID_ARG, op().name, {"workspace"}));
    }
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, NullDescriptorEverywhere) {
    EXPECT_TRUE(FailsWith(op().destroy(nullptr), OPRT_ERR_INVALID_ARG, op().name, {"desc"}));
    std::vector<float> buf(12);
    EXPECT_TRUE(FailsWith(op().execute(nullptr, nullptr, 0, buf.data(), buf.data(), buf.data()),
                          OPRT_ERR_INVALID_ARG, op().name, {"desc"}));
}

TEST_P(ApiErrors, NullDataAtExecute) {
    void *desc = create_ok(valid());
    ASSERT_NE(desc, nullptr);
    std::vector<float> out(12), in0(12, 1.0f), in1(12, 2.0f);
    for (int k = 0; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        void *ptrs[3] = {out.data(), in0.data(), in1.data()};
        ptrs[k] = nullptr;
        EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, ptrs[0], ptrs[1], ptrs[2]),
                              OPRT_ERR_INVALID_ARG, op().name, {op().args[k]}));
        EXPECT_NE(std::string(oprt_last_error_message()).find(op().execute_fn), std::string::npos)
            << oprt_last_error_message();
    }
    EXPECT_OK(op().execute(desc, nullptr, 0, out.data(), in0.data(), in1.data()));
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, EmptyTensorsRunWithNullData) {
    using Shape = std::vector<int64_t>;
    std::vector<std::pair<Shape, int64_t>> cases;  // (in shape, axis)
    if (op().elementwise) {
        cases = {{{0}, 0}, {{0, 4}, 0}, {{3, 0, 2}, 0}, {{2, 3, 0}, 0}};
    } else {
        // Every out here is empty too (reduce_sum over an empty axis with a
        // non-empty out is ReduceOverEmptyAxisNeedsOnlyOut).
        cases = {{{0, 4}, 1}, {{0, 4}, -1}, {{3, 0, 2}, 0}, {{3, 0, 2}, 2}};
        if (!is_reduce()) cases.insert(cases.end(), {{{0}, 0}, {{3, 0}, 1}, {{3, 0}, 0}});
    }
    for (const auto &c : cases) {
        SCOPED_TRACE(std::to_string(c.first.size()) + "-d empty, axis " + std::to_string(c.second));
        Args a;
        Shape out = c.first;
        if (is_reduce()) out.erase(out.begin() + (c.second < 0 ? c.second + int64_t(out.size()) : c.second));
        a.views[0] = make_view(OPRT_DTYPE_F32, out);
        a.views[1] = make_view(OPRT_DTYPE_F32, c.first);
        a.views[2] = make_view(OPRT_DTYPE_F32, c.first);
        a.axis = c.second;
        void *desc = create_ok(a);
        ASSERT_NE(desc, nullptr);
        EXPECT_OK(op().execute(desc, nullptr, 0, nullptr, nullptr, nullptr));
        EXPECT_OK(op().destroy(desc));
    }
    if (op().elementwise && op().num_inputs == 2) {
        // One empty input broadcast against an empty out, the other input a real (1, 4).
        Args a;
        a.views[0] = make_view(OPRT_DTYPE_F32, {0, 4});
        a.views[1] = make_view(OPRT_DTYPE_F32, {0, 4});
        a.views[2] = make_view(OPRT_DTYPE_F32, {0, 1});
        void *desc = create_ok(a);
        ASSERT_NE(desc, nullptr);
        EXPECT_OK(op().execute(desc, nullptr, 0, nullptr, nullptr, nullptr));
        EXPECT_OK(op().destroy(desc));
    }
}

TEST_P(ReduceSumApiErrors, ReduceOverEmptyAxisNeedsOnlyOut) {
    Args a;
    a.views[0] = make_view(OPRT_DTYPE_F32, {3});
    a.views[1] = make_view(OPRT_DTYPE_F32, {3, 0});
    a.axis = 1;
    void *desc = create_ok(a);
    ASSERT_NE(desc, nullptr);
    std::vector<float> out(3, std::numeric_limits<float>::quiet_NaN());
    EXPECT_OK(op().execute(desc, nullptr, 0, out.data(), nullptr, nullptr));
    EXPECT_EQ(out, std::vector<float>(3, 0.0f));
    EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, nullptr, nullptr, nullptr),
                          OPRT_ERR_INVALID_ARG, op().name, {"out"}));
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, MisalignedDataPointers) {
    for (oprt_dtype_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        void *desc = create_ok(valid(dt));
        ASSERT_NE(desc, nullptr);
        std::vector<float> storage[3] = {std::vector<float>(16), std::vector<float>(16, 1.0f),
                                         std::vector<float>(16, 1.0f)};
        const std::vector<size_t> bad_shifts =
            dt == OPRT_DTYPE_F32 ? std::vector<size_t>{1, 2, 3} : std::vector<size_t>{1, 3};
        for (int k = 0; k < num_views(); ++k) {
            for (size_t shift : bad_shifts) {
                SCOPED_TRACE(std::string(oprt_dtype_string(dt)) + " " + op().args[k] + " + " +
                             std::to_string(shift) + " bytes");
                void *ptrs[3] = {storage[0].data(), storage[1].data(), storage[2].data()};
                ptrs[k] = reinterpret_cast<char *>(ptrs[k]) + shift;
                EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, ptrs[0], ptrs[1], ptrs[2]),
                                      OPRT_ERR_INVALID_ARG, op().name, {op().args[k]}));
            }
            // Aligned to the element but not to 16 bytes: fine.
            void *ptrs[3] = {storage[0].data(), storage[1].data(), storage[2].data()};
            ptrs[k] = reinterpret_cast<char *>(ptrs[k]) + oprt_test::dtype_bytes(dt);
            EXPECT_OK(op().execute(desc, nullptr, 0, ptrs[0], ptrs[1], ptrs[2]));
        }
        EXPECT_OK(op().destroy(desc));
    }
}

TEST_P(ApiErrors, OutOverlappingAnInput) {
    // One buffer; out starts one element after the input: partial overlap.
    std::vector<float> buf(64, 1.0f), other(64, 1.0f);
    void *desc = create_ok(valid());
    ASSERT_NE(desc, nullptr);
    for (int k = 1; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        for (size_t shift : {size_t(1), size_t(2), size_t(11)}) {
            const void *ins[2] = {other.data(), other.data() + 32};
            ins[k - 1] = buf.data();
            EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, buf.data() + shift, ins[0], ins[1]),
                                  OPRT_ERR_INVALID_ARG, op().name, {op().args[0], op().args[k]}));
            // ...and out before the input (reduce_sum's out is only 3 elements long).
            if (is_reduce() && shift >= 3) continue;
            ins[k - 1] = buf.data() + shift;
            EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, buf.data(), ins[0], ins[1]),
                                  OPRT_ERR_INVALID_ARG, op().name, {op().args[0], op().args[k]}));
        }
        // Adjacent but disjoint is fine.
        const void *ins[2] = {other.data(), other.data() + 32};
        ins[k - 1] = buf.data();
        EXPECT_OK(op().execute(desc, nullptr, 0, buf.data() + 12, ins[0], ins[1]));
    }
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, ExactInPlace) {
    std::vector<float> buf(12, 1.0f), other(12, 2.0f);
    void *desc = create_ok(valid());
    ASSERT_NE(desc, nullptr);
    if (op().elementwise) {
        for (int k = 1; k < num_views(); ++k) {
            const void *ins[2] = {other.data(), other.data()};
            ins[k - 1] = buf.data();
            EXPECT_OK(op().execute(desc, nullptr, 0, buf.data(), ins[0], ins[1]));
        }
        if (op().num_inputs == 2) EXPECT_OK(op().execute(desc, nullptr, 0, buf.data(), buf.data(), buf.data()));
    } else {
        // softmax and reduce_sum cannot run in place.
        EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, buf.data(), buf.data(), nullptr),
                              OPRT_ERR_INVALID_ARG, op().name, {"out", "in"}));
    }
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ElementwiseApiErrors, InPlaceNeedsTheSameLayout) {
    std::vector<float> buf(16, 1.0f), other(16, 2.0f);
    for (int k = 1; k < num_views(); ++k) {
        SCOPED_TRACE(op().args[k]);
        // The input read transposed from out's memory: same pointer, other layout.
        Args a;
        a.views[0] = make_view(OPRT_DTYPE_F32, {3, 3});
        a.views[1] = make_view(OPRT_DTYPE_F32, {3, 3});
        a.views[2] = make_view(OPRT_DTYPE_F32, {3, 3});
        a.views[k] = make_view(OPRT_DTYPE_F32, {3, 3}, {1, 3});
        void *desc = create_ok(a);
        ASSERT_NE(desc, nullptr);
        const void *ins[2] = {other.data(), other.data()};
        ins[k - 1] = buf.data();
        EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, buf.data(), ins[0], ins[1]),
                              OPRT_ERR_INVALID_ARG, op().name, {op().args[0], op().args[k]}));
        EXPECT_OK(op().destroy(desc));

        // A broadcast input at out's address: (3) read along every row of out (3, 3).
        a.views[k] = make_view(OPRT_DTYPE_F32, {3});
        desc = create_ok(a);
        ASSERT_NE(desc, nullptr);
        EXPECT_TRUE(FailsWith(op().execute(desc, nullptr, 0, buf.data(), ins[0], ins[1]),
                              OPRT_ERR_INVALID_ARG, op().name, {op().args[0], op().args[k]}));
        EXPECT_OK(op().destroy(desc));
    }
}

TEST_P(ApiErrors, DescriptorKeepsTheBackendOfItsCreation) {
    void *desc = create_ok(valid());  // created on CPU (the fixture's backend)
    ASSERT_NE(desc, nullptr);
    std::vector<float> out(12), in0(12, 1.0f), in1(12, 2.0f);
    for (oprt_backend_t b : {OPRT_BACKEND_AUTO, OPRT_BACKEND_NVIDIA, OPRT_BACKEND_METAX}) {
        BackendGuard guard(b);
        EXPECT_OK(op().execute(desc, nullptr, 0, out.data(), in0.data(), in1.data()));
    }
    EXPECT_OK(op().destroy(desc));
}

TEST_P(ApiErrors, UnavailableBackend) {
    for (oprt_backend_t b : {OPRT_BACKEND_NVIDIA, OPRT_BACKEND_METAX}) {
        SCOPED_TRACE(oprt_backend_string(b));
        int available = -1;
        ASSERT_EQ(oprt_backend_is_available(b, &available), OPRT_SUCCESS);
        ASSERT_TRUE(available == 0 || available == 1);
        BackendGuard guard(b);  // selecting it succeeds either way; creating is what fails
        oprt_backend_t current;
        ASSERT_EQ(oprt_get_backend(&current), OPRT_SUCCESS);
        EXPECT_EQ(current, b);
        if (available) {
            EXPECT_OK(create(valid()));
        } else {
            EXPECT_TRUE(CreateFails(valid(), OPRT_ERR_BACKEND_UNAVAILABLE, {oprt_backend_string(b)}));
        }
    }
    // Back on CPU everything works again.
    EXPECT_OK(create(valid()));
}

INSTANTIATE_TEST_SUITE_P(AllOps, ApiErrors,
                         ::testing::Values(OpKind::kCopy, OpKind::kVectorAdd, OpKind::kRelu,
                                           OpKind::kReduceSum, OpKind::kSoftmax),
                         op_label);
INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseApiErrors,
                         ::testing::Values(OpKind::kCopy, OpKind::kVectorAdd, OpKind::kRelu), op_label);
INSTANTIATE_TEST_SUITE_P(Axis, AxisApiErrors, ::testing::Values(OpKind::kReduceSum, OpKind::kSoftmax),
                         op_label);
INSTANTIATE_TEST_SUITE_P(Only, ReduceSumApiErrors, ::testing::Values(OpKind::kReduceSum), op_label);
INSTANTIATE_TEST_SUITE_P(Only, SoftmaxApiErrors, ::testing::Values(OpKind::kSoftmax), op_label);
INSTANTIATE_TEST_SUITE_P(Only, ReluApiErrors, ::testing::Values(OpKind::kRelu), op_label);

// ---------------------------------------------------------------------------
// Runtime-wide functions: names, backend selection, the error message.

TEST(ApiRuntime, StatusStrings) {
    std::set<std::string> seen;
    for (int v = 0; v <= 6; ++v) {
        const char *s = oprt_status_string(static_cast<oprt_status_t>(v));
        ASSERT_NE(s, nullptr) << v;
        EXPECT_STRNE(s, "") << v;
        EXPECT_TRUE(seen.insert(s).second) << "duplicate status string " << s;
    }
    EXPECT_NE(std::string(oprt_status_string(OPRT_ERR_INVALID_ARG)).find("INVALID_ARG"), std::string::npos);
    EXPECT_NE(std::string(oprt_status_string(OPRT_ERR_BACKEND_UNAVAILABLE)).find("BACKEND_UNAVAILABLE"),
              std::string::npos);
    for (int bad : {7, 42, -1}) {
        const char *s = oprt_status_string(raw_enum<oprt_status_t>(bad));
        ASSERT_NE(s, nullptr) << bad;
        EXPECT_STRNE(s, "") << bad;
        EXPECT_EQ(seen.count(s), 0u) << "unknown status " << bad << " named like a known one: " << s;
    }
}

TEST(ApiRuntime, BackendStrings) {
    EXPECT_STREQ(oprt_backend_string(OPRT_BACKEND_AUTO), "auto");
    EXPECT_STREQ(oprt_backend_string(OPRT_BACKEND_NVIDIA), "nvidia");
    EXPECT_STREQ(oprt_backend_string(OPRT_BACKEND_METAX), "metax");
    EXPECT_STREQ(oprt_backend_string(OPRT_BACKEND_CPU), "cpu");
    for (int bad : {4, 99, -1}) {
        const char *s = oprt_backend_string(raw_enum<oprt_backend_t>(bad));
        ASSERT_NE(s, nullptr) << bad;
        EXPECT_STRNE(s, "") << bad;
        for (const char *known : {"auto", "nvidia", "metax", "cpu"}) EXPECT_STRNE(s, known) << bad;
    }
}

TEST(ApiRuntime, DtypeStrings) {
    std::set<std::string> seen;
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_F32, OPRT_DTYPE_BF16}) {
        const char *s = oprt_dtype_string(dt);
        ASSERT_NE(s, nullptr);
        EXPECT_STRNE(s, "");
        EXPECT_TRUE(seen.insert(s).second) << s;
    }
    const char *s = oprt_dtype_string(raw_enum<oprt_dtype_t>(7));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(seen.count(s), 0u);
}

TEST(ApiRuntime, DefaultBackendIsAutoAndMessageEmptyOnAFreshThread) {
    oprt_backend_t backend = OPRT_BACKEND_CPU;
    std::string message = "unset";
    oprt_status_t status = OPRT_ERR_RUNTIME;
    std::thread t([&] {
        message = oprt_last_error_message();
        status = oprt_get_backend(&backend);
    });
    t.join();
    EXPECT_EQ(status, OPRT_SUCCESS);
    EXPECT_EQ(backend, OPRT_BACKEND_AUTO);
    EXPECT_EQ(message, "");
}

TEST(ApiRuntime, SetBackendRejectsUnknownValues) {
    BackendGuard guard(OPRT_BACKEND_CPU);
    for (int bad : {4, 5, 99, -1, INT_MAX}) {
        SCOPED_TRACE(bad);
        EXPECT_TRUE(FailsWith(oprt_set_backend(raw_enum<oprt_backend_t>(bad)), OPRT_ERR_INVALID_ARG,
                              "oprt_set_backend", {"backend"}));
        oprt_backend_t current = OPRT_BACKEND_AUTO;
        ASSERT_EQ(oprt_get_backend(&current), OPRT_SUCCESS);
        EXPECT_EQ(current, OPRT_BACKEND_CPU) << "a rejected value must not change the backend";
    }
    for (oprt_backend_t b : {OPRT_BACKEND_AUTO, OPRT_BACKEND_NVIDIA, OPRT_BACKEND_METAX,
                             OPRT_BACKEND_CPU}) {
        EXPECT_OK(oprt_set_backend(b));
        oprt_backend_t current;
        ASSERT_EQ(oprt_get_backend(&current), OPRT_SUCCESS);
        EXPECT_EQ(current, b);
    }
}

TEST(ApiRuntime, GetBackendNull) {
    EXPECT_TRUE(FailsWith(oprt_get_backend(nullptr), OPRT_ERR_INVALID_ARG, "oprt_get_backend",
                          {"backend"}));
}

TEST(ApiRuntime, BackendIsAvailable) {
    int available = -1;
    EXPECT_OK(oprt_backend_is_available(OPRT_BACKEND_CPU, &available));
    EXPECT_EQ(available, 1);
    available = -1;
    EXPECT_OK(oprt_backend_is_available(OPRT_BACKEND_AUTO, &available));
    EXPECT_EQ(available, 1);
    for (oprt_backend_t b : {OPRT_BACKEND_NVIDIA, OPRT_BACKEND_METAX}) {
        available = -1;
        EXPECT_OK(oprt_backend_is_available(b, &available));
        EXPECT_TRUE(available == 0 || available == 1) << available;
    }
    EXPECT_TRUE(FailsWith(oprt_backend_is_available(OPRT_BACKEND_CPU, nullptr), OPRT_ERR_INVALID_ARG,
                          "oprt_backend_is_available", {"available"}));
    for (int bad : {4, 99, -1}) {
        available = -1;
        EXPECT_TRUE(FailsWith(oprt_backend_is_available(raw_enum<oprt_backend_t>(bad), &available),
                              OPRT_ERR_INVALID_ARG, "oprt_backend_is_available", {"backend"}));
    }
}

TEST(ApiRuntime, BackendIsPerThread) {
    BackendGuard main_guard(OPRT_BACKEND_CPU);
    std::promise<void> a_set, b_done;
    std::shared_future<void> a_set_f = a_set.get_future().share(), b_done_f = b_done.get_future().share();
    oprt_backend_t a_before = OPRT_BACKEND_CPU, a_after = OPRT_BACKEND_AUTO, b_seen = OPRT_BACKEND_CPU;
    oprt_status_t a_set_status = OPRT_ERR_RUNTIME, b_set_status = OPRT_ERR_RUNTIME;
    std::thread a([&] {
        oprt_get_backend(&a_before);
        a_set_status = oprt_set_backend(OPRT_BACKEND_NVIDIA);
        a_set.set_value();
        b_done_f.wait();
        oprt_get_backend(&a_after);
    });
    std::thread b([&] {
        a_set_f.wait();
        oprt_get_backend(&b_seen);  // thread a's choice is not visible here
        b_set_status = oprt_set_backend(OPRT_BACKEND_METAX);
        b_done.set_value();
    });
    a.join();
    b.join();
    EXPECT_EQ(a_before, OPRT_BACKEND_AUTO) << "a new thread starts on AUTO, not the main thread's CPU";
    EXPECT_EQ(a_set_status, OPRT_SUCCESS);
    EXPECT_EQ(b_set_status, OPRT_SUCCESS);
    EXPECT_EQ(b_seen, OPRT_BACKEND_AUTO);
    EXPECT_EQ(a_after, OPRT_BACKEND_NVIDIA) << "thread b's set_backend leaked into thread a";
    oprt_backend_t main_now = OPRT_BACKEND_AUTO;
    ASSERT_EQ(oprt_get_backend(&main_now), OPRT_SUCCESS);
    EXPECT_EQ(main_now, OPRT_BACKEND_CPU);
}

TEST(ApiRuntime, ErrorMessageIsPerThread) {
    ASSERT_EQ(oprt_get_backend(nullptr), OPRT_ERR_INVALID_ARG);
    const std::string main_msg = oprt_last_error_message();
    ASSERT_FALSE(main_msg.empty());
    std::string thread_msg;
    std::thread t([&] {
        oprt_copy_descriptor_t d = nullptr;
        oprt_create_copy_descriptor(&d, nullptr, nullptr);
        thread_msg = oprt_last_error_message();
    });
    t.join();
    EXPECT_NE(thread_msg.find("copy"), std::string::npos) << thread_msg;
    EXPECT_EQ(main_msg, oprt_last_error_message()) << "another thread's failure replaced this one's";
}

}  // namespace
