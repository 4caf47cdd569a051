// Notifications a kernel is too old for fail with a clear error and are never written. No
// kernel needed: the fd is invalid, so anything that did reach it would fail differently.
#include "gtest/gtest.h"
#include "ringfuse/notifier.h"

namespace ringfuse {
namespace {

Negotiated KernelSpeaking(uint32_t minor) {
  Negotiated negotiated;
  negotiated.kernel_minor = minor;
  negotiated.minor = minor;
  return negotiated;
}

TEST(NotifierVersions, IncEpochNeeds744) {
  Notifier notifier(-1, KernelSpeaking(43));
  const absl::Status status = notifier.IncEpoch();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_NE(status.message().find("INC_EPOCH"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("7.44"), absl::string_view::npos) << status;
}

TEST(NotifierVersions, PruneNeeds745) {
  Notifier notifier(-1, KernelSpeaking(44));
  const uint64_t ids[] = {5};
  const absl::Status status = notifier.Prune(ids);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_NE(status.message().find("7.45"), absl::string_view::npos) << status;
}

TEST(NotifierVersions, ResendNeeds740AndExpireOnlyNeeds738) {
  Notifier notifier(-1, KernelSpeaking(37));
  EXPECT_TRUE(absl::IsFailedPrecondition(notifier.Resend()));
  EXPECT_TRUE(absl::IsFailedPrecondition(notifier.InvalEntry(1, "name", /*expire_only=*/true)));
}

TEST(NotifierVersions, ANewEnoughKernelGetsTheWriteAndItsError) {
  // Negative control: with 7.45 the check passes and the write itself fails on the bad fd.
  Notifier notifier(-1, KernelSpeaking(45));
  const absl::Status status = notifier.IncEpoch();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Bad file descriptor"), absl::string_view::npos) << status;
}

TEST(NotifierVersions, BatchReportsTheTooOldOnesInPlace) {
  Notifier notifier(-1, KernelSpeaking(43));
  const Notification batch[] = {Notification::InvalInode(2, -1, 0), Notification::IncEpoch()};
  const std::vector<absl::Status> statuses = notifier.SendBatch(batch);
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_NE(statuses[0].message().find("Bad file descriptor"), absl::string_view::npos)
      << statuses[0];
  EXPECT_NE(statuses[1].message().find("7.44"), absl::string_view::npos) << statuses[1];
}

}  // namespace
}  // namespace ringfuse
