// softmax_rows_registers_kernel (ops/softmax/nvidia/rows_registers.cuh)
// launched directly, at launch shapes the plan's kRegisterRows table can name,
// whichever of them the plan picks today: groups within a warp (several rows a
// block) and of whole warps (a block a row, the warps joined through shared
// memory), one to nine vectors a thread (eighteen at f32), plain or with a
// blocks-per-SM bound and the loads staged through shared memory, and the
// persistent feeds (grids far smaller than the rows, so each group loops over
// many rows with its next row in a second register set or in the ring's other
// stage, and grids of one round). Rows that fill the group and rows
// that leave most of it padding; the common form (dense, 16-byte aligned rows
// of whole vectors) and the general one (odd lengths, rows off boundaries, in
// and out at different offsets, outer dims that do not merge); special values.
// Each output checked against a float64 reference, unwritten elements caught by
// the NaN poison. Skips without a GPU.
#include "op_cases.h"
#include "ops/softmax/nvidia/rows_registers.cuh"

// gpu::launch_overlapped asks this (the library's own copy is internal to it):
// plain launches here.
namespace oprt::gpu {
bool overlapped_launch_allowed() { return false; }
}  // namespace oprt::gpu

namespace nvt {
namespace {

namespace sk = oprt::softmax::gpu_kernels;

class NvidiaSoftmaxRowsRegisters : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
};

std::string feed_name(sk::Feed f) {
    switch (f) {
    case sk::Feed::kLoads: return "loads";
    case sk::Feed::kStaged: return "staged";
    case sk::Feed::kPersistent: return "persistent";
    default: return "persistent ring";
    }
}

// Softmax over the last axis of in_s by the kernel at <kThreads, kVecs,
// kMinBlocks, kFeed> (the persistent feeds on at most max_blocks blocks),
// against float64.
template <typename T, int kThreads, int kVecs, int kMinBlocks, sk::Feed kFeed>
void check_rows(oprt_dtype_t dt, int64_t max_blocks, const Spec &in_s, bool specials = false,
                std::vector<int64_t> out_strides = {}, int64_t out_offset = 0) {
    const int nd = int(in_s.shape.size());
    const std::string what = std::string("rows_registers<") + dtype_name(dt) + ", " + std::to_string(kThreads) +
                             ", " + std::to_string(kVecs) + ", " + std::to_string(kMinBlocks) + ", " +
                             feed_name(kFeed) + "> on " + std::to_string(max_blocks) + " blocks at most, in" +
                             shape_str(in_s.shape) +
                             (in_s.strides.empty() ? "" : " strided") +
                             (in_s.offset ? " offset " + std::to_string(in_s.offset) : "") +
                             (out_offset ? " out offset " + std::to_string(out_offset) : "") +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, in_s.shape, in_s.strides, in_s.offset, Fill::kUniform, 17, 6.0f);
    if (specials) inject_specials(in, nd - 1);
    make_tensor(out, dt, in_s.shape, out_strides, out_offset, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    const int64_t L = in.shape[size_t(nd - 1)];
    ASSERT_LE(L, sk::register_rows_capacity<T>(kThreads, kVecs));
    // The outer dims as the library passes them (unmerged here: the general form's loop).
    oprt::gpu::OuterIndex ix;
    ix.ndim = nd - 1;
    int64_t rows = 1;
    bool aligned = oprt::gpu::aligned_to(in.data(), 16) && oprt::gpu::aligned_to(out.data(), 16);
    for (int d = 0; d < nd - 1; ++d) {
        ix.shape[d] = in.shape[size_t(d)];
        ix.in_strides[d] = in.strides[size_t(d)];
        ix.out_strides[d] = out.strides[size_t(d)];
        rows *= in.shape[size_t(d)];
        aligned = aligned && (in.strides[size_t(d)] * int64_t(sizeof(T))) % 16 == 0 &&
                  (out.strides[size_t(d)] * int64_t(sizeof(T))) % 16 == 0;
    }
    sk::launch_register_rows<T, kThreads, kVecs, kMinBlocks, kFeed>(
        static_cast<const T *>(in.data()), static_cast<T *>(out.data()), rows, L, aligned, ix, nullptr, max_blocks);
    NVT_CUDA_OK(cudaGetLastError());
    download(out);

    const Tol t = softmax_tol(dt);
    std::vector<char> is_elem(size_t(out.storage_elems()), 0);
    int failures = 0;
    const auto slice = [&](int64_t s, const std::vector<int64_t> &io, const std::vector<int64_t> &oo) {
        // PyTorch's definition in float64: max ignoring NaN, exp(x - max), sum, divide.
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t off : io) m = std::max(m, double(in.get(off)));
        double sum = 0;
        for (int64_t off : io) sum += std::exp(double(in.get(off)) - m);
        for (size_t k = 0; k < io.size(); ++k) {
            is_elem[size_t(oo[k])] = 1;
            const double want = std::exp(double(in.get(io[k])) - m) / sum;
            const double got = out.get(oo[k]);
            if (!close(got, want, t.rtol, t.atol) && ++failures <= 5)
                ADD_FAILURE() << what << ": row " << s << " element " << k << " = " << got << ", want " << want;
        }
    };
    for_each_slice(in, out, nd - 1, false, slice);
    if (failures > 5) ADD_FAILURE() << what << ": " << failures << " failures";
    expect_untouched_gaps(out, is_elem, what);
}

// The layouts and lengths one launch shape must take, rows of up to its capacity C.
template <typename T, int kThreads, int kVecs, int kMinBlocks, sk::Feed kFeed>
void check_shape(oprt_dtype_t dt, int64_t max_blocks = oprt::gpu::kMaxGridBlocks) {
    const int64_t C = sk::register_rows_capacity<T>(kThreads, kVecs);
    const int64_t P = oprt::gpu::vector_width<T>();
    const auto check = [&](const Spec &in_s, bool specials = false, std::vector<int64_t> out_strides = {},
                           int64_t out_offset = 0) {
        check_rows<T, kThreads, kVecs, kMinBlocks, kFeed>(dt, max_blocks, in_s, specials, out_strides, out_offset);
    };
    // The common form: the full group, half of it, one vector, few and many rows
    // (a last block with groups past the last row).
    for (int64_t L : {C, C / 2 + P, P}) check({{37, L}});
    check({{C <= 1024 ? 1000 : 200, C}});
    check({{C}});  // one row, no outer dims
    check({{600, C}}, /*specials=*/true);
    // The general form: odd lengths (every other row off a boundary, heads peeled),
    // in and out off a boundary alike, out alone off one (element loads and stores).
    for (int64_t L : {C - 1, C / 2 + 3, int64_t(3)}) check({{37, L}});
    check({{300, C - 1}}, /*specials=*/true);
    check({{300, C}, {}, 1}, false, {}, /*out_offset=*/1);
    check({{300, C}, {}, 1}, /*specials=*/true, {}, /*out_offset=*/1);
    check({{300, C}}, false, {}, /*out_offset=*/1);
    // Outer dims that do not merge (a gap after each row group) and a padded row stride.
    check({{3, 5, C}, {6 * C + 8, C, 1}});
    check({{40, C - 2}, {C + 8, 1}}, /*specials=*/true);
}

template <int kThreads, int kVecs, int kMinBlocks = 0, sk::Feed kFeed = sk::Feed::kLoads>
void check_all_dtypes(int64_t max_blocks = oprt::gpu::kMaxGridBlocks) {
    check_shape<float, kThreads, kVecs, kMinBlocks, kFeed>(OPRT_DTYPE_F32, max_blocks);
    if constexpr (kVecs <= 9) {  // at most 72 values a thread
        check_shape<__half, kThreads, kVecs, kMinBlocks, kFeed>(OPRT_DTYPE_F16, max_blocks);
        check_shape<__nv_bfloat16, kThreads, kVecs, kMinBlocks, kFeed>(OPRT_DTYPE_BF16, max_blocks);
    }
}

// Every shape kRegisterRows (softmax_cuda.cu) uses is among these.
TEST_F(NvidiaSoftmaxRowsRegisters, GroupsWithinAWarp) {
    check_all_dtypes<4, 1>();
    check_all_dtypes<4, 2>();
    check_all_dtypes<8, 1>();
    check_all_dtypes<8, 2>();
    check_all_dtypes<8, 4>();
    check_all_dtypes<16, 1>();
    check_all_dtypes<16, 2>();
    check_all_dtypes<32, 1>();
    check_all_dtypes<32, 2>();
    check_all_dtypes<32, 4>();
    check_all_dtypes<32, 8>();
}

// A blocks-per-SM bound and loads staged through shared memory (16-bit rows
// of 513-1024 take <32, 4, 8, staged>, of 1281-1536 <32, 6, 0, staged>); the
// bench's other such shapes.
TEST_F(NvidiaSoftmaxRowsRegisters, BoundAndStaged) {
    constexpr sk::Feed kStaged = sk::Feed::kStaged;
    check_all_dtypes<32, 4, 8, kStaged>();
    check_all_dtypes<32, 4, 8>();
    check_all_dtypes<32, 4, 0, kStaged>();
    check_all_dtypes<32, 6, 0, kStaged>();
    check_all_dtypes<32, 8, 8, kStaged>();
    check_all_dtypes<64, 2, 16, kStaged>();  // a block a row: the staging slots of whole warps
    check_all_dtypes<4, 1, 0, kStaged>();    // groups smaller than a vector's 16-bit head
}

// The persistent feeds (the plan's 16-bit rows of 2049-2304 take <32, 9, 0,
// ring>, its f32 ones <32, 18, 0, persistent>; <256, 2> and <256, 4> are
// groups of whole warps): one block (every group loops over all its rows),
// three and seven blocks (rows not a multiple of the grid's, the last round
// partly past the last row), and a grid of one round.
TEST_F(NvidiaSoftmaxRowsRegisters, Persistent) {
    constexpr sk::Feed kRing = sk::Feed::kPersistentRing, kPersistent = sk::Feed::kPersistent;
    for (int64_t max_blocks : {int64_t(1), int64_t(3), int64_t(7), oprt::gpu::kMaxGridBlocks}) {
        check_all_dtypes<32, 9, 0, kRing>(max_blocks);
        check_all_dtypes<256, 2, 0, kRing>(max_blocks);
        check_all_dtypes<32, 18, 0, kPersistent>(max_blocks);
        check_all_dtypes<256, 4, 0, kPersistent>(max_blocks);
    }
    check_all_dtypes<8, 2, 0, kRing>(5);  // groups within a warp, several rows a block
    check_all_dtypes<8, 2, 0, kPersistent>(5);
}

TEST_F(NvidiaSoftmaxRowsRegisters, GroupsOfWarps) {
    check_all_dtypes<64, 4>();  // a block each: two 64-thread rows once shared one block's warp slots
    check_all_dtypes<128, 1>();
    check_all_dtypes<128, 2>();
    check_all_dtypes<128, 4>();
    check_all_dtypes<128, 8>();
    check_all_dtypes<256, 1>();
    check_all_dtypes<256, 2>();
    check_all_dtypes<256, 4>();
    check_all_dtypes<256, 8>();
    check_all_dtypes<512, 1>();
    check_all_dtypes<512, 2>();
    check_all_dtypes<512, 8>();
    check_all_dtypes<1024, 1>();
}

}  // namespace
}  // namespace nvt
