// Ring entries handed over by another process: counts, strides and offsets from the handover
// record are checked before anything is mapped.
#include "transport/ring_entry_block.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::internal {
namespace {

using ::testing::HasSubstr;

constexpr uintptr_t kAnywhere = uintptr_t{1} << 44;
constexpr size_t kStride = 4096;

absl::Status MapHandedOver(uint64_t offset, size_t count, size_t stride) {
  absl::StatusOr<std::shared_ptr<EntryFile>> file = EntryFile::Create();
  if (!file.ok()) return file.status();
  return EntryBlock::MapAt(*file, offset, kAnywhere, count, stride).status();
}

// Sizes that wrap round size_t: 2^61 entries of 8-byte payloads are 0 bytes mod 2^64, headers
// and payloads alike, which the bounds check let through (the mmap then failed, where a
// size of a page would have mapped, and entries past it been written); 2^52 + 1 payloads of
// 4096 bytes come to 4096 bytes.
TEST(EntryBlockMapAt, ACountOrStrideWhoseSizeOverflowsIsRefused) {
  const size_t wrapping = (size_t{1} << 52) + 1;
  for (const auto& [count, stride] :
       {std::pair{size_t{1} << 61, size_t{8}}, std::pair{wrapping, kStride},
        std::pair{size_t{2}, std::numeric_limits<size_t>::max()},
        std::pair{std::numeric_limits<size_t>::max(), kStride}}) {
    const absl::Status status = MapHandedOver(0, count, stride);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr("overflows")) << count << " x " << stride;
  }
}

TEST(EntryBlockMapAt, AnOffsetPastWhatAFileCanHoldIsRefused) {
  const absl::Status status = MapHandedOver(uint64_t{1} << 63, 1, kStride);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("overflows"));
}

// The control: a sane block past the end of the (empty) file is refused by the bounds check.
TEST(EntryBlockMapAt, ASaneBlockBeyondTheFileIsRefusedByItsBounds) {
  const absl::Status status = MapHandedOver(0, 1, kStride);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("has no"));
}

}  // namespace
}  // namespace ringfuse::internal
