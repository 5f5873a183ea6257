// Descriptors as checked handles. A descriptor handle given to a caller is not
// the address of the descriptor: it encodes a slot of one process-wide table and
// the slot's generation. Every call that takes a descriptor looks the handle up,
// so a destroyed handle, a destroyed one whose slot was reused since, a handle of
// another operator, or a value the library never returned is a status, never a
// read of freed or foreign memory.
//
// Why a table with generations rather than a magic number or liveness flag in the
// descriptor itself: a mark stored in freed memory is read after free (undefined,
// and reported by ASan), and once malloc hands the same address to a new
// descriptor a stale pointer would pass every check. Keeping destroyed
// descriptors' memory forever (a quarantine) would be safe but leaks one block per
// descriptor, and Python creates descriptors per call. The table only ever grows
// by whole chunks that are never freed, so a lookup reads memory the library owns
// whatever the handle's value, and a slot's generation changes at every destroy,
// so an old handle never matches again (until 2^32 reuses of that one slot).
#pragma once

#include <cstdint>

#include "operator_runtime/api.h"

namespace oprt {

// A descriptor type's kind: the address of kind_tag<Desc>, one per type.
template <typename Desc>
inline const char kind_tag = 0;

// Registers `object` of `kind` made by the function `made_by` (a string
// literal, for messages) and returns its handle; 0 when the table is full.
uint64_t handle_insert(const void *kind, const char *made_by, void *object);

enum class HandleState { kLive, kNull, kDead, kWrongKind };

// A failed lookup: why, and for kWrongKind the function that made the handle.
struct HandleMiss {
    HandleState state = HandleState::kLive;
    const char *made_by = nullptr;
};

// The object of a live handle of `kind`; nullptr otherwise, with *miss saying
// why. Lock-free: safe alongside other threads' lookups of the same handle.
void *handle_lookup(uint64_t handle, const void *kind, HandleMiss *miss);

// Removes a live handle of `kind` and returns its object (the caller deletes
// it); nullptr and *miss otherwise. The handle is dead from then on.
void *handle_remove(uint64_t handle, const void *kind, HandleMiss *miss);

// OPRT_ERR_INVALID_ARG with a message naming `fn` for a handle that is not live.
oprt_status_t handle_failure(const char *fn, const HandleMiss &miss);

}  // namespace oprt
