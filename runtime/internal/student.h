// What an exercise's source file (student/<backend>/<op>_student.*, written by
// scripts/camp.py exercise) needs: the plan types, ExecArgs, and one macro that
// registers its variant as "student" of (op, backend) while the library loads.
#pragma once

#include "runtime/internal/dispatch.h"
#include "runtime/internal/error.h"
#include "runtime/internal/plan.h"

// OP: the operator's short name (copy, softmax, ...); BACKEND: OPRT_BACKEND_CPU
// or OPRT_BACKEND_NVIDIA; PLAN: the operator's plan type (ElementwisePlan, AxisPlan
// or MatmulPlan: the registry is type-erased, any plan type of runtime/internal/plan.h
// works); PLAN_FN / RUN_FN: the variant's plan and launch functions.
#define OPRT_REGISTER_STUDENT_VARIANT(OP, BACKEND, PLAN, PLAN_FN, RUN_FN)                                \
    namespace {                                                                                          \
    const ::oprt::Variant<::oprt::PLAN> oprt_student_variant_{"student", &PLAN_FN, &RUN_FN};             \
    const bool oprt_student_registered_ = ::oprt::register_student_variant(#OP, BACKEND,                 \
                                                                           &oprt_student_variant_);      \
    }
