// The registry of "student" variants: an exercise's source file
// (student/<backend>/<op>_student.*, made by scripts/camp.py exercise) registers
// its variant here while the library loads, so no operator or backend file
// changes when an exercise is added or removed.
#include <cstring>
#include <mutex>

#include "runtime/internal/dispatch.h"

namespace oprt {
namespace {

struct StudentSlot {
    const char *op;
    oprt_backend_t backend;
    const void *variant;
};

constexpr int kMaxStudents = 64;

struct Registry {
    std::mutex mutex;
    StudentSlot slots[kMaxStudents] = {};
    int count = 0;
};

// Built on first use: registrations run from other files' static initializers.
Registry &registry() {
    static Registry r;
    return r;
}

}  // namespace

bool register_student_variant(const char *op, oprt_backend_t backend, const void *variant) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (int i = 0; i < r.count; ++i)
        if (r.slots[i].backend == backend && std::strcmp(r.slots[i].op, op) == 0) return false;
    if (r.count == kMaxStudents) return false;
    r.slots[r.count++] = {op, backend, variant};
    return true;
}

const void *find_student_variant(const char *op, oprt_backend_t backend) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (int i = 0; i < r.count; ++i)
        if (r.slots[i].backend == backend && std::strcmp(r.slots[i].op, op) == 0) return r.slots[i].variant;
    return nullptr;
}

}  // namespace oprt
