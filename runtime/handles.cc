// The descriptor handle table (see runtime/internal/handles.h).
#include "runtime/internal/handles.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "runtime/internal/error.h"

namespace oprt {
namespace {

static_assert(sizeof(void *) == 8, "a handle is a 64-bit slot index and generation");

// A handle: the slot's generation (never 0) in the high 32 bits, its index in
// the low 32. Slots live in chunks allocated on demand and never freed.
constexpr uint32_t kChunkBits = 12;
constexpr uint32_t kChunkSize = 1u << kChunkBits;  // slots per chunk
constexpr uint32_t kMaxChunks = 1u << 12;           // 16 Mi live descriptors at most

struct Slot {
    // Generation of the live descriptor in the slot, or 0 while the slot is free.
    std::atomic<uint32_t> live{0};
    uint32_t next_generation = 1;  // under the mutex
    std::atomic<void *> object{nullptr};
    std::atomic<const void *> kind{nullptr};
    std::atomic<const char *> made_by{nullptr};
};

std::atomic<Slot *> g_chunks[kMaxChunks];
std::mutex g_mutex;            // insert and remove
std::vector<uint32_t> g_free;  // indices of free slots (under the mutex)
uint32_t g_used = 0;           // slots handed out so far (under the mutex)

// A fork while another thread holds the mutex would leave it locked forever in
// the child: it is taken around every fork, so the child gets it unlocked.
void lock_for_fork() { g_mutex.lock(); }
void unlock_after_fork() { g_mutex.unlock(); }
[[maybe_unused]] const int g_fork_handlers = pthread_atfork(&lock_for_fork, &unlock_after_fork, &unlock_after_fork);

Slot *slot_at(uint32_t index) {
    if (index >= kMaxChunks * kChunkSize) return nullptr;
    Slot *chunk = g_chunks[index >> kChunkBits].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[index & (kChunkSize - 1)];
}

Slot *find(uint64_t handle, const void *kind, HandleMiss *miss) {
    *miss = HandleMiss{};
    if (handle == 0) {
        miss->state = HandleState::kNull;
        return nullptr;
    }
    const uint32_t generation = uint32_t(handle >> 32), index = uint32_t(handle);
    Slot *slot = slot_at(index);
    if (slot == nullptr || generation == 0 ||
        slot->live.load(std::memory_order_acquire) != generation) {
        miss->state = HandleState::kDead;
        return nullptr;
    }
    if (slot->kind.load(std::memory_order_relaxed) != kind) {
        miss->state = HandleState::kWrongKind;
        miss->made_by = slot->made_by.load(std::memory_order_relaxed);
        return nullptr;
    }
    return slot;
}

}  // namespace

uint64_t handle_insert(const void *kind, const char *made_by, void *object) {
    std::lock_guard<std::mutex> lock(g_mutex);
    uint32_t index;
    if (!g_free.empty()) {
        index = g_free.back();
        g_free.pop_back();
    } else {
        if (g_used == kMaxChunks * kChunkSize) return 0;
        index = g_used;
        if (g_chunks[index >> kChunkBits].load(std::memory_order_relaxed) == nullptr) {
            Slot *chunk = new (std::nothrow) Slot[kChunkSize];
            if (chunk == nullptr) return 0;
            g_chunks[index >> kChunkBits].store(chunk, std::memory_order_release);
        }
        // Room for every slot's index, so handle_remove never allocates.
        if (g_free.capacity() < size_t(g_used) + 1) {
            try {
                g_free.reserve(size_t(g_used) + kChunkSize);
            } catch (const std::bad_alloc &) {
                return 0;
            }
        }
        ++g_used;
    }
    Slot *slot = slot_at(index);
    const uint32_t generation = slot->next_generation;
    slot->next_generation = generation == UINT32_MAX ? 1 : generation + 1;
    slot->object.store(object, std::memory_order_relaxed);
    slot->kind.store(kind, std::memory_order_relaxed);
    slot->made_by.store(made_by, std::memory_order_relaxed);
    slot->live.store(generation, std::memory_order_release);
    return (uint64_t(generation) << 32) | index;
}

void *handle_lookup(uint64_t handle, const void *kind, HandleMiss *miss) {
    Slot *slot = find(handle, kind, miss);
    return slot == nullptr ? nullptr : slot->object.load(std::memory_order_relaxed);
}

void *handle_remove(uint64_t handle, const void *kind, HandleMiss *miss) {
    std::lock_guard<std::mutex> lock(g_mutex);  // two destroys of one handle: one wins
    Slot *slot = find(handle, kind, miss);
    if (slot == nullptr) return nullptr;
    void *object = slot->object.load(std::memory_order_relaxed);
    slot->live.store(0, std::memory_order_release);
    slot->object.store(nullptr, std::memory_order_relaxed);
    g_free.push_back(uint32_t(handle));  // capacity reserved at insert: no allocation
    return object;
}

oprt_status_t handle_failure(const char *fn, const HandleMiss &miss) {
    switch (miss.state) {
    case HandleState::kNull: return fail(OPRT_ERR_INVALID_ARG, "%s: desc is NULL", fn);
    case HandleState::kWrongKind:
        return fail(OPRT_ERR_INVALID_ARG, "%s: desc is a descriptor of another operator (made by %s)",
                    fn, miss.made_by ? miss.made_by : "another create function");
    default:
        return fail(OPRT_ERR_INVALID_ARG, "%s: desc is not a live descriptor (destroyed already, or "
                    "a value this library never returned)", fn);
    }
}

}  // namespace oprt
