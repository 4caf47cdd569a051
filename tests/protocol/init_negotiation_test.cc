// Negotiate: the kernel's INIT offer and the server's wishes in, the agreement and init_out out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ringfuse/init.h"
#include "ringfuse/protocol/negotiate.h"

namespace ringfuse {
namespace {

using ::testing::HasSubstr;

namespace flag = wire::init_flag;

constexpr uint64_t kAllFlags = (uint64_t{1} << 43) - 1;
constexpr uint64_t kLowWord = 0xffffffffull;

wire::InitIn Offer(uint32_t minor, uint64_t flags, uint32_t max_readahead = 1 << 20) {
  wire::InitIn in{};
  in.major = 7;
  in.minor = minor;
  in.max_readahead = max_readahead;
  in.flags = static_cast<uint32_t>(flags);
  in.flags2 = static_cast<uint32_t>(flags >> 32);
  return in;
}

InitResult Agree(const wire::InitIn& kernel, const InitWishes& wishes = {}) {
  absl::StatusOr<InitResult> result = Negotiate(kernel, wishes);
  if (!result.ok()) {
    ADD_FAILURE() << result.status();
    return InitResult{};
  }
  return *result;
}

std::string Refusal(const wire::InitIn& kernel, const InitWishes& wishes = {}) {
  absl::StatusOr<InitResult> result = Negotiate(kernel, wishes);
  if (result.ok()) {
    ADD_FAILURE() << "negotiation succeeded";
    return {};
  }
  return std::string(result.status().message());
}

TEST(Negotiate, MinorIsTheSmallerOfTheKernelsAndOurs) {
  for (uint32_t minor = 31; minor <= 50; minor = minor == 45 ? 50 : minor + 1) {
    SCOPED_TRACE(minor);
    const InitResult result = Agree(Offer(minor, kAllFlags));
    EXPECT_EQ(result.agreed.kernel_minor, minor);
    EXPECT_EQ(result.agreed.minor, std::min(minor, 45u));
    EXPECT_EQ(result.reply.major, 7u);
    EXPECT_EQ(result.reply.minor, 45u);
  }
}

TEST(Negotiate, AKernelOfferingNoFlagsAtAllIsAccepted) {
  const InitResult result = Agree(Offer(31, 0));
  EXPECT_EQ(result.agreed.flags, 0u);
  EXPECT_EQ(result.reply.flags, 0u);
  EXPECT_EQ(result.agreed.max_pages, 32u);
}

TEST(Negotiate, Minor30IsRefusedNamingTheVersion) {
  EXPECT_THAT(Refusal(Offer(30, kAllFlags)), HasSubstr("7.30"));
}

TEST(Negotiate, AMajorOtherThan7IsRefusedNamingTheVersion) {
  wire::InitIn offer = Offer(45, kAllFlags);
  offer.major = 8;
  EXPECT_THAT(Refusal(offer), HasSubstr("8.45"));
  offer.major = 6;
  EXPECT_THAT(Refusal(offer), HasSubstr("6.45"));
}

TEST(Negotiate, FlagsAreThoseBothOfferedAndWished) {
  InitWishes wishes;
  wishes.flags = flag::kAsyncRead | flag::kBigWrites | flag::kWritebackCache;
  const InitResult result =
      Agree(Offer(45, flag::kAsyncRead | flag::kWritebackCache | flag::kPosixLocks), wishes);
  EXPECT_EQ(result.agreed.flags, flag::kAsyncRead | flag::kWritebackCache);
  EXPECT_EQ(result.reply.flags, flag::kAsyncRead | flag::kWritebackCache);
  EXPECT_EQ(result.reply.flags2, 0u);
  EXPECT_EQ(result.agreed.kernel_flags,
            flag::kAsyncRead | flag::kWritebackCache | flag::kPosixLocks);
}

TEST(Negotiate, HighFlagsCountOnlyWhenTheKernelOffersInitExt) {
  InitWishes wishes;
  wishes.flags = kAllFlags;
  // A 7.35 kernel has no INIT_EXT; whatever sits where flags2 would be must be ignored.
  wire::InitIn old_kernel = Offer(35, kAllFlags & kLowWord & ~flag::kInitExt);
  old_kernel.flags2 = 0xffffffffu;
  const InitResult result = Agree(old_kernel, wishes);
  EXPECT_EQ(result.agreed.flags >> 32, 0u);
  EXPECT_EQ(result.agreed.kernel_flags >> 32, 0u);
  EXPECT_FALSE(result.agreed.Has(flag::kInitExt));
  EXPECT_EQ(result.reply.flags2, 0u);
  EXPECT_EQ(result.reply.flags & flag::kInitExt, 0u);
  EXPECT_FALSE(result.agreed.io_uring);
}

TEST(Negotiate, HighFlagsAreAgreedWhenInitExtIsOffered) {
  InitWishes wishes;
  wishes.flags = flag::kSecurityCtx | flag::kHasResend;
  const InitResult result =
      Agree(Offer(45, flag::kInitExt | flag::kSecurityCtx | flag::kHasResend), wishes);
  EXPECT_TRUE(result.agreed.Has(flag::kSecurityCtx | flag::kHasResend));
  EXPECT_EQ(result.reply.flags2, (flag::kSecurityCtx | flag::kHasResend) >> 32);
}

TEST(Negotiate, InitExtIsAnsweredWheneverOfferedEvenIfNotWished) {
  InitWishes wishes;
  wishes.flags = 0;
  const InitResult result = Agree(Offer(45, flag::kInitExt), wishes);
  EXPECT_TRUE(result.agreed.Has(flag::kInitExt));
  EXPECT_NE(result.reply.flags & flag::kInitExt, 0u);
}

TEST(Negotiate, OverIoUringAgreedEnablesIoUringAndIsBit9OfFlags2) {
  InitWishes wishes;
  wishes.flags |= flag::kOverIoUring;
  const InitResult result = Agree(Offer(45, kAllFlags), wishes);
  EXPECT_TRUE(result.agreed.io_uring);
  EXPECT_NE(result.reply.flags2 & (1u << 9), 0u);
}

TEST(Negotiate, OverIoUringNotOfferedLeavesIoUringOff) {
  InitWishes wishes;
  wishes.flags |= flag::kOverIoUring;
  const InitResult result = Agree(Offer(45, kAllFlags & ~flag::kOverIoUring), wishes);
  EXPECT_FALSE(result.agreed.io_uring);
  EXPECT_EQ(result.reply.flags2 & (1u << 9), 0u);
}

TEST(Negotiate, ARequiredFlagTheKernelLacksFailsNamingIt) {
  InitWishes wishes;
  wishes.required_flags = flag::kOverIoUring;
  EXPECT_THAT(Refusal(Offer(45, kAllFlags & ~flag::kOverIoUring), wishes),
              HasSubstr("OVER_IO_URING"));
  // Offered in flags2 but without INIT_EXT, so not offered at all.
  EXPECT_THAT(Refusal(Offer(45, kAllFlags & ~flag::kInitExt), wishes), HasSubstr("OVER_IO_URING"));
}

TEST(Negotiate, ARequiredFlagTheKernelOffersIsAgreedEvenIfNotWished) {
  InitWishes wishes;
  wishes.flags = 0;
  wishes.required_flags = flag::kPosixLocks;
  EXPECT_TRUE(Agree(Offer(45, kAllFlags), wishes).agreed.Has(flag::kPosixLocks));
}

TEST(Negotiate, MaxWriteIsRoundedDownToWholePages) {
  InitWishes wishes;
  wishes.max_write = (1 << 20) + 100;
  const InitResult result = Agree(Offer(45, kAllFlags), wishes);
  EXPECT_EQ(result.agreed.max_write, 1u << 20);
  EXPECT_EQ(result.reply.max_write, 1u << 20);
}

TEST(Negotiate, MaxWriteBelowOnePageIsRefused) {
  InitWishes wishes;
  wishes.max_write = 4095;
  EXPECT_THAT(Refusal(Offer(45, kAllFlags), wishes), HasSubstr("4095"));
}

TEST(Negotiate, MaxPagesFollowsMaxWriteWhenMaxPagesIsAgreed) {
  const InitResult result = Agree(Offer(45, kAllFlags));  // default max_write: 1 MiB
  EXPECT_EQ(result.agreed.max_pages, 256u);
  EXPECT_EQ(result.reply.max_pages, 256u);

  InitWishes big_pages;
  big_pages.page_size = 16384;
  EXPECT_EQ(Agree(Offer(45, kAllFlags), big_pages).agreed.max_pages, 64u);
}

TEST(Negotiate, WithoutMaxPagesTheKernelDefaultOf32PagesApplies) {
  const InitResult result = Agree(Offer(45, kAllFlags & ~flag::kMaxPages));
  EXPECT_EQ(result.agreed.max_pages, 32u);
  EXPECT_EQ(result.reply.max_pages, 0u);
  EXPECT_EQ(result.reply.flags & flag::kMaxPages, 0u);
}

TEST(Negotiate, MaxReadaheadIsTheSmallerOfOfferAndWish) {
  InitWishes wishes;
  wishes.max_readahead = 1 << 20;
  EXPECT_EQ(Agree(Offer(45, kAllFlags, 128 << 10), wishes).reply.max_readahead, 128u << 10);
  wishes.max_readahead = 64 << 10;
  EXPECT_EQ(Agree(Offer(45, kAllFlags, 1 << 20), wishes).reply.max_readahead, 64u << 10);
}

TEST(Negotiate, BackgroundLimitsArePassedThrough) {
  InitWishes wishes;
  wishes.max_background = 100;
  wishes.congestion_threshold = 75;
  const InitResult result = Agree(Offer(45, kAllFlags), wishes);
  EXPECT_EQ(result.reply.max_background, 100);
  EXPECT_EQ(result.reply.congestion_threshold, 75);
}

TEST(Negotiate, TimeGranMustBeAPowerOfTenUpToOneSecond) {
  for (uint32_t bad : {0u, 3u, 20u, 999u, 2'000'000'000u}) {
    InitWishes wishes;
    wishes.time_gran = bad;
    EXPECT_THAT(Refusal(Offer(45, kAllFlags), wishes), HasSubstr("time_gran")) << bad;
  }
  for (uint32_t good : {1u, 10u, 100u, 1000u, 1'000'000u, 1'000'000'000u}) {
    InitWishes wishes;
    wishes.time_gran = good;
    EXPECT_EQ(Agree(Offer(45, kAllFlags), wishes).reply.time_gran, good);
  }
}

TEST(Negotiate, MaxStackDepthIsSentOnlyWithPassthrough) {
  InitWishes wishes;
  wishes.flags |= flag::kPassthrough;
  wishes.max_stack_depth = 2;
  EXPECT_EQ(Agree(Offer(45, kAllFlags), wishes).reply.max_stack_depth, 2u);
  EXPECT_EQ(Agree(Offer(45, kAllFlags & ~flag::kPassthrough), wishes).reply.max_stack_depth, 0u);
  wishes.flags &= ~flag::kPassthrough;
  EXPECT_EQ(Agree(Offer(45, kAllFlags), wishes).reply.max_stack_depth, 0u);
}

TEST(Negotiate, MaxStackDepthAbove2IsRefused) {
  InitWishes wishes;
  wishes.flags |= flag::kPassthrough;
  wishes.max_stack_depth = 3;
  EXPECT_THAT(Refusal(Offer(45, kAllFlags), wishes), HasSubstr("max_stack_depth"));
}

TEST(Negotiate, RequestTimeoutIsSentOnlyWithRequestTimeout) {
  InitWishes wishes;
  wishes.flags |= flag::kRequestTimeout;
  wishes.request_timeout = 30;
  EXPECT_EQ(Agree(Offer(45, kAllFlags), wishes).reply.request_timeout, 30);
  EXPECT_EQ(Agree(Offer(45, kAllFlags & ~flag::kRequestTimeout), wishes).reply.request_timeout, 0);
  wishes.flags &= ~flag::kRequestTimeout;
  EXPECT_EQ(Agree(Offer(45, kAllFlags), wishes).reply.request_timeout, 0);
}

TEST(Negotiate, ReplyLeavesMapAlignmentAndUnusedZero) {
  const wire::InitOut reply = Agree(Offer(45, kAllFlags)).reply;
  EXPECT_EQ(reply.map_alignment, 0);
  for (uint16_t word : reply.unused) EXPECT_EQ(word, 0);
}

TEST(InitOutSize, MatchesTheKernelsCompatSizes) {
  EXPECT_EQ(InitOutSize(4), 8u);
  EXPECT_EQ(InitOutSize(5), 24u);
  EXPECT_EQ(InitOutSize(22), 24u);
  for (uint32_t minor = 23; minor <= 45; ++minor) EXPECT_EQ(InitOutSize(minor), 64u) << minor;
}

TEST(InitFlagNames, NamesEveryBitAsTheKernelDoes) {
  // From the kernel header, bit by bit, without the FUSE_ prefix.
  constexpr std::string_view kKernelNames[] = {
      "ASYNC_READ",
      "POSIX_LOCKS",
      "FILE_OPS",
      "ATOMIC_O_TRUNC",
      "EXPORT_SUPPORT",
      "BIG_WRITES",
      "DONT_MASK",
      "SPLICE_WRITE",
      "SPLICE_MOVE",
      "SPLICE_READ",
      "FLOCK_LOCKS",
      "HAS_IOCTL_DIR",
      "AUTO_INVAL_DATA",
      "DO_READDIRPLUS",
      "READDIRPLUS_AUTO",
      "ASYNC_DIO",
      "WRITEBACK_CACHE",
      "NO_OPEN_SUPPORT",
      "PARALLEL_DIROPS",
      "HANDLE_KILLPRIV",
      "POSIX_ACL",
      "ABORT_ERROR",
      "MAX_PAGES",
      "CACHE_SYMLINKS",
      "NO_OPENDIR_SUPPORT",
      "EXPLICIT_INVAL_DATA",
      "MAP_ALIGNMENT",
      "SUBMOUNTS",
      "HANDLE_KILLPRIV_V2",
      "SETXATTR_EXT",
      "INIT_EXT",
      "INIT_RESERVED",
      "SECURITY_CTX",
      "HAS_INODE_DAX",
      "CREATE_SUPP_GROUP",
      "HAS_EXPIRE_ONLY",
      "DIRECT_IO_ALLOW_MMAP",
      "PASSTHROUGH",
      "NO_EXPORT_SUPPORT",
      "HAS_RESEND",
      "ALLOW_IDMAP",
      "OVER_IO_URING",
      "REQUEST_TIMEOUT",
  };
  for (size_t bit = 0; bit < std::size(kKernelNames); ++bit) {
    EXPECT_EQ(InitFlagNames(uint64_t{1} << bit), kKernelNames[bit]) << bit;
  }
}

TEST(InitFlagNames, JoinsWithBarsInBitOrderAndNumbersUnknownBits) {
  EXPECT_EQ(InitFlagNames(0), "0");
  EXPECT_EQ(InitFlagNames(flag::kBigWrites | flag::kAsyncRead), "ASYNC_READ|BIG_WRITES");
  EXPECT_EQ(InitFlagNames(flag::kOverIoUring | (uint64_t{1} << 63)), "OVER_IO_URING|BIT63");
}

}  // namespace
}  // namespace ringfuse
