// The one validation path shared by every operator: view checks, broadcasting,
// dimension collapsing into plans, and the checks every execute() makes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operator_runtime/api.h"
#include "runtime/internal/plan.h"

namespace oprt {

// What execute() must know about one operand to check the pointers it gets.
struct OperandSpan {
    int64_t numel = 0;
    int64_t extent = 0;              // elements from data to one past the last element
    bool same_layout_as_out = false;  // identical shape and strides to out (in-place is safe)
    // The view's own layout (dims of size 1 and stride 0 dropped): which
    // elements it touches, for the exact overlap test.
    int32_t ndim = 0;
    int64_t shape[OPRT_MAX_DIMS] = {};
    int64_t strides[OPRT_MAX_DIMS] = {};
};

// Whether two views of one dtype, `offset` elements apart (b's data minus a's),
// share an element. Exact: a bounded linear Diophantine equation, searched with
// a work limit; kUndecided when the limit is reached first.
enum class Overlap { kNo, kYes, kUndecided };
Overlap elements_overlap(const OperandSpan &a, const OperandSpan &b, int64_t offset);
constexpr int64_t kOverlapWorkLimit = 1 << 16;  // search steps before kUndecided

// Everything execute() checks before it dispatches; filled at creation.
struct ExecContract {
    const char *op = "";
    const char *names[3] = {"out", "in", "in1"};  // argument names for messages
    oprt_backend_t backend = OPRT_BACKEND_CPU;
    int64_t element_size = 4;
    size_t workspace_bytes = 0;
    int num_inputs = 1;
    bool allow_in_place = false;  // elementwise ops may write over an identical input
    OperandSpan out;
    OperandSpan in[2];
};

// Checks a view: non-NULL, ndim in 0..8, known dtype, shapes and strides >= 0,
// element count and extent that fit in int64.
oprt_status_t check_view(const char *op, const char *arg, const oprt_tensor_view_t *view);

// `arg` has the same dtype as `ref` (named `ref_arg`).
oprt_status_t check_same_dtype(const char *op, const char *arg, const oprt_tensor_view_t *view,
                               const char *ref_arg, const oprt_tensor_view_t *ref);

// An output: no stride 0 on a dim of size > 1 and no two elements at one address.
oprt_status_t check_output_layout(const char *op, const char *arg, const oprt_tensor_view_t *view);

// A view's shape for messages: "(3, 4)"; "()" for a 0-d view.
struct ShapeText {
    char text[176] = "";  // eight dims of up to 19 digits with their separators
    explicit ShapeText(const oprt_tensor_view_t &view);
};

int64_t view_numel(const oprt_tensor_view_t &view);
OperandSpan view_span(const oprt_tensor_view_t &view);

// Elementwise: validates out and inputs (inputs broadcast to out by numpy
// rules), collapses dims, fills the plan and the execute contract.
oprt_status_t plan_elementwise(const char *op, const char *out_arg, const oprt_tensor_view_t *out,
                               const char *const *in_args, const oprt_tensor_view_t *const *ins,
                               int num_inputs, ElementwisePlan *plan, ExecContract *contract);

// One axis: validates in, out and axis. reduce == true: out is in's shape with
// the axis removed or kept as 1; false (softmax): out has in's shape.
oprt_status_t plan_axis(const char *op, const oprt_tensor_view_t *out,
                        const oprt_tensor_view_t *in, int64_t axis, bool reduce, AxisPlan *plan,
                        ExecContract *contract);

// The checks of every execute(): workspace size, NULL data, element
// alignment, and overlap between out and the inputs.
oprt_status_t check_execute(const ExecContract &contract, const void *workspace,
                            size_t workspace_size, const void *out, const void *in0,
                            const void *in1);
// The operand part of check_execute (all but the workspace checks).
oprt_status_t check_execute_operands(const ExecContract &contract, const void *out,
                                     const void *in0, const void *in1);

}  // namespace oprt
