// The integrity exerciser's operations, and the seeded generator that picks them: every choice,
// and every byte written, follows from the seed and the model, so a seed replays its run exactly.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/daemon/integrity_model.h"

namespace ringfuse::integrity {

enum class OpKind : uint8_t {
  kWrite,        // pwrite at any offset, past the end too (leaving a hole)
  kAppend,       // write through an O_APPEND fd
  kTruncate,     // ftruncate, down or up
  kRead,         // pread, past the end too
  kReadAll,      // read(2) from 0 to the end, the whole file
  kMmapWrite,    // memcpy into a MAP_SHARED mapping, then msync
  kMmapRead,     // memcpy out of a MAP_SHARED mapping
  kDirectWrite,  // pwrite of whole aligned blocks through an O_DIRECT fd
  kDirectRead,   // pread of whole aligned blocks through an O_DIRECT fd
  kFsync,
  kReopen,  // close every fd of the file, and open them again
  kStat,    // fstat: the size
};
inline constexpr int kOpKindCount = 12;
using OpKinds = std::bitset<kOpKindCount>;

inline OpKinds AllOpKinds() { return OpKinds().set(); }
inline OpKinds Only(std::initializer_list<OpKind> kinds) {
  OpKinds set;
  for (OpKind kind : kinds) set.set(static_cast<size_t>(kind));
  return set;
}
std::string_view Name(OpKind kind);
std::string Names(OpKinds kinds);  // comma-separated

// O_DIRECT offsets and lengths are multiples of this, which suits every logical block size.
inline constexpr uint64_t kDirectAlignment = 4096;

// Each file has two read-write fds, so that data written through one is read through the other.
enum class Fd : uint8_t { kFirst, kSecond };

struct Op {
  OpKind kind = OpKind::kStat;
  int file = 0;
  Fd fd = Fd::kFirst;
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes; for kTruncate, the new size
  uint64_t data_seed = 0;
};

std::string Describe(const Op& op);

// The `op.length` bytes a writing operation writes. None is zero, so that a hole or a lost write
// where data belongs cannot pass for data.
std::string DataOf(const Op& op);

// splitmix64: small, fast, and the same sequence on every platform and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  uint64_t Below(uint64_t bound) { return bound == 0 ? 0 : Next() % bound; }
  bool Percent(int percent) { return Below(100) < static_cast<uint64_t>(percent); }

 private:
  uint64_t state_;
};

class OpGenerator {
 public:
  OpGenerator(uint64_t seed, OpKinds kinds, uint64_t max_file_size)
      : random_(seed), kinds_(kinds), max_file_size_(max_file_size) {}

  // The next operation, drawn to suit the files as `model` says they are now.
  Op Next(const Model& model);

 private:
  OpKind PickKind(uint64_t file_size);
  uint64_t PickLength();
  uint64_t PickBlocks(uint64_t max_blocks);
  void Shape(Op& op, uint64_t file_size);
  void ShapeDirect(Op& op, uint64_t file_size);

  Random random_;
  const OpKinds kinds_;
  const uint64_t max_file_size_;
};

}  // namespace ringfuse::integrity
