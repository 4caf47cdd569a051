#include "tests/daemon/integrity_ops.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/str_format.h"

namespace ringfuse::integrity {
namespace {

struct KindInfo {
  std::string_view name;
  int weight;  // how often the generator picks it, relative to the others
};

constexpr std::array<KindInfo, kOpKindCount> kKinds = {{
    {"write", 22},
    {"append", 6},
    {"truncate", 6},
    {"pread", 16},
    {"read-all", 8},
    {"mmap-write", 6},
    {"mmap-read", 5},
    {"direct-write", 6},
    {"direct-read", 5},
    {"fsync", 2},
    {"reopen", 3},
    {"fstat", 3},
}};

// Lengths: mostly small, but a fifth of them up to longer than one FUSE request (128 KiB by
// default), so that the kernel splits them.
constexpr uint64_t kSmall = 512;
constexpr uint64_t kMedium = 16 << 10;
constexpr uint64_t kLarge = 300 << 10;
// How far past the end a write may start (leaving a hole), a read may start (reading nothing),
// and a truncation may grow a file.
constexpr uint64_t kHoleReach = 128 << 10;
constexpr uint64_t kReadReach = 4 << 10;
constexpr uint64_t kGrowReach = 256 << 10;
// O_DIRECT transfers: 1 to 32 blocks. Writes start up to 8 blocks past the end (a hole), reads up
// to 2 (a short read, or none).
constexpr uint64_t kMaxDirectBlocks = 32;
constexpr uint64_t kDirectWriteReach = 8;
constexpr uint64_t kDirectReadReach = 2;

bool StaysInsideTheFile(OpKind kind) {
  return kind == OpKind::kMmapWrite || kind == OpKind::kMmapRead;
}

uint64_t Blocks(uint64_t bytes) { return (bytes + kDirectAlignment - 1) / kDirectAlignment; }

}  // namespace

std::string_view Name(OpKind kind) { return kKinds[static_cast<size_t>(kind)].name; }

std::string Names(OpKinds kinds) {
  std::string names;
  for (size_t i = 0; i < kOpKindCount; ++i) {
    if (!kinds.test(i)) continue;
    if (!names.empty()) names += ',';
    names += kKinds[i].name;
  }
  return names;
}

// Append, O_DIRECT and reopen use fds of their own, so their description names none.
std::string Describe(const Op& op) {
  const std::string file = absl::StrFormat("%s file-%d", Name(op.kind), op.file);
  const std::string fd = absl::StrFormat("%s fd%d", file, op.fd == Fd::kFirst ? 1 : 2);
  switch (op.kind) {
    case OpKind::kTruncate: return absl::StrFormat("%s to %d", fd, op.length);
    case OpKind::kAppend: return absl::StrFormat("%s length=%d", file, op.length);
    case OpKind::kReopen: return file;
    case OpKind::kDirectWrite:
    case OpKind::kDirectRead:
      return absl::StrFormat("%s offset=%d length=%d", file, op.offset, op.length);
    case OpKind::kReadAll:
    case OpKind::kFsync:
    case OpKind::kStat: return fd;
    default: return absl::StrFormat("%s offset=%d length=%d", fd, op.offset, op.length);
  }
}

std::string DataOf(const Op& op) {
  Random random(op.data_seed);
  std::string data(op.length, '\0');
  for (size_t at = 0; at < data.size(); at += sizeof(uint64_t)) {
    const uint64_t word = random.Next();
    std::memcpy(&data[at], &word, std::min(sizeof(word), data.size() - at));
  }
  // memchr rather than a byte loop: the zeros are few, and this runs in unoptimized builds too.
  char* const end = data.data() + data.size();
  char* zero = data.data();
  while ((zero = static_cast<char*>(std::memchr(zero, '\0', end - zero))) != nullptr) *zero = '\1';
  return data;
}

uint64_t Random::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

Op OpGenerator::Next(const Model& model) {
  Op op;
  op.file = static_cast<int>(random_.Below(model.files()));
  const uint64_t size = model.Size(op.file);
  op.kind = PickKind(size);
  op.fd = random_.Percent(30) ? Fd::kSecond : Fd::kFirst;
  op.data_seed = random_.Next();
  Shape(op, size);
  return op;
}

// Mapping reads and writes stay inside the file (past it, a mapping faults), so they wait for
// data. fstat is always possible, and stands in when nothing else is.
OpKind OpGenerator::PickKind(uint64_t file_size) {
  int total = 0;
  std::array<int, kOpKindCount> weights{};
  for (size_t i = 0; i < kOpKindCount; ++i) {
    const bool possible = kinds_.test(i) && (file_size > 0 || !StaysInsideTheFile(OpKind(i)));
    weights[i] = possible ? kKinds[i].weight : 0;
    total += weights[i];
  }
  int pick = static_cast<int>(random_.Below(total));
  for (size_t i = 0; i < kOpKindCount; ++i) {
    if (pick < weights[i]) return OpKind(i);
    pick -= weights[i];
  }
  return OpKind::kStat;
}

uint64_t OpGenerator::PickLength() {
  const uint64_t band = random_.Below(100);
  const uint64_t longest = band < 45 ? kSmall : band < 80 ? kMedium : kLarge;
  return 1 + random_.Below(longest);
}

// Writes start at most at max_file_size, and truncations grow files no further, which keeps
// files about that small; appends, rarer, may pass it.
void OpGenerator::Shape(Op& op, uint64_t size) {
  switch (op.kind) {
    case OpKind::kWrite:
      op.length = PickLength();
      op.offset = size == 0 || random_.Percent(25) ? size + random_.Below(kHoleReach)
                                                   : random_.Below(size + 1);
      op.offset = std::min(op.offset, max_file_size_);
      return;
    case OpKind::kAppend: op.length = PickLength(); return;
    case OpKind::kTruncate:
      op.length = random_.Percent(50) ? random_.Below(size + 1)
                                      : std::min(max_file_size_, size + random_.Below(kGrowReach));
      return;
    case OpKind::kRead:
      op.offset = random_.Below(size + kReadReach + 1);
      op.length = PickLength();
      return;
    case OpKind::kMmapWrite:
    case OpKind::kMmapRead:
      op.offset = random_.Below(size);
      op.length = std::min(PickLength(), size - op.offset);
      return;
    case OpKind::kDirectWrite:
    case OpKind::kDirectRead: ShapeDirect(op, size); return;
    default: return;
  }
}

void OpGenerator::ShapeDirect(Op& op, uint64_t size) {
  const uint64_t reach = op.kind == OpKind::kDirectWrite ? kDirectWriteReach : kDirectReadReach;
  const uint64_t block = std::min(random_.Below(Blocks(size) + reach), Blocks(max_file_size_));
  op.offset = block * kDirectAlignment;
  op.length = (1 + random_.Below(kMaxDirectBlocks)) * kDirectAlignment;
}

}  // namespace ringfuse::integrity
