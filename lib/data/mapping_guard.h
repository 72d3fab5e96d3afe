// Copies out of a memory-mapped file that survive the file shrinking under
// the mapping.
//
// A page of a file mapping that lies beyond the file's current end raises
// SIGBUS when touched: a token file truncated or rewritten in place under a
// running job would kill every rank with no word about which file. A guarded
// copy runs under a thread-local sigsetjmp point; a SIGBUS at an address of
// the guarded range jumps back and the copy reports failure, so the caller
// can throw a DataError naming the file. Any other SIGBUS meets the
// disposition that was in place before the first guarded copy: a real bug
// still crashes.
#pragma once

#include <cstddef>

namespace nss::data {

/// Runs `copy(state)`, which reads inside [begin, begin + bytes) of a file
/// mapping. Returns false, instead of ending the process, when it touched a
/// page the file no longer has. `copy` is abandoned where it faulted, so it
/// must only load from the mapping and store to plain memory: no locks, no
/// allocation, no objects with destructors.
bool copy_from_mapping(const void* begin, std::size_t bytes, void (*copy)(void* state),
                       void* state);

/// The same for a callable `copy()`.
template <class Copy>
bool copy_from_mapping(const void* begin, std::size_t bytes, Copy& copy) {
  return copy_from_mapping(
      begin, bytes, [](void* state) { (*static_cast<Copy*>(state))(); }, &copy);
}

}  // namespace nss::data
