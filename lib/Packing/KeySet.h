//===- KeySet.h - A bounded set of 128-bit state keys -----------*- C++ -*-===//
//
// Internal to MemfitPacking. The searches remember failed states by a
// 128-bit hash; this is the table they keep them in.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_KEYSET_H
#define MEMFIT_LIB_PACKING_KEYSET_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Open-addressing set of 128-bit keys. Stops growing at a fixed number of
/// entries (inserts are then dropped, which only costs search time).
class KeySet {
public:
  explicit KeySet(int64_t limit) : maxEntries(limit) {}

  bool contains(uint64_t a, uint64_t b) const {
    if (table.empty())
      return false;
    a = fix(a);
    size_t mask = table.size() - 1;
    for (size_t i = a & mask;; i = (i + 1) & mask) {
      const Entry &e = table[i];
      if (e.a == 0)
        return false;
      if (e.a == a && e.b == b)
        return true;
    }
  }

  void insert(uint64_t a, uint64_t b) {
    if (maxEntries <= 0)
      return;
    if ((count + 1) * 2 > int64_t(table.size())) {
      if (int64_t(table.size()) >= 2 * maxEntries)
        return;
      grow();
    }
    a = fix(a);
    size_t mask = table.size() - 1;
    for (size_t i = a & mask;; i = (i + 1) & mask) {
      Entry &e = table[i];
      if (e.a == 0) {
        e.a = a;
        e.b = b;
        ++count;
        return;
      }
      if (e.a == a && e.b == b)
        return;
    }
  }

private:
  struct Entry {
    uint64_t a = 0, b = 0;
  };
  static uint64_t fix(uint64_t a) { return a == 0 ? 1 : a; }

  void grow() {
    std::vector<Entry> old;
    old.swap(table);
    table.assign(old.empty() ? 1024 : old.size() * 2, Entry());
    size_t mask = table.size() - 1;
    for (const Entry &e : old) {
      if (e.a == 0)
        continue;
      for (size_t i = e.a & mask;; i = (i + 1) & mask) {
        if (table[i].a == 0) {
          table[i] = e;
          break;
        }
      }
    }
  }

  std::vector<Entry> table;
  int64_t count = 0;
  int64_t maxEntries;
};

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_KEYSET_H
