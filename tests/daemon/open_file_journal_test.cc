// The open-file journal a kept ringfused writes to a memfd: what one process records, another
// (the one after a crash) finds through its own copy of the memfd, released files gone; a record
// torn by a crash in the middle of it is skipped; what cannot be recorded is not; a memfd that is
// no journal is refused.
#include "daemon/crash/open_file_journal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// The keeper's copy of the memfd, as the next daemon gets it.
std::unique_ptr<OpenFileJournal> AdoptCopyOf(const OpenFileJournal& journal) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> adopted =
      OpenFileJournal::Adopt(base::UniqueFd(::fcntl(journal.fd(), F_DUPFD_CLOEXEC, 0)));
  EXPECT_TRUE(adopted.ok()) << adopted.status();
  return adopted.ok() ? std::move(*adopted) : nullptr;
}

TEST(OpenFileJournal, TheNextProcessFindsTheFilesStillOpen) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal = OpenFileJournal::Create();
  ASSERT_TRUE(journal.ok()) << journal.status();
  (*journal)->Opened(7, 107, "handle of seven", O_RDWR);
  (*journal)->Opened(9, 109, "handle of nine", O_WRONLY | O_APPEND);
  (*journal)->Opened(11, 111, "handle of eleven", O_RDONLY);
  (*journal)->Released(9);
  std::unique_ptr<OpenFileJournal> next = AdoptCopyOf(**journal);
  ASSERT_NE(next, nullptr);
  const std::vector<OpenFileJournal::Entry> entries = next->Recover();
  EXPECT_THAT(entries, ElementsAre(Field(&OpenFileJournal::Entry::fh, 7),
                                   Field(&OpenFileJournal::Entry::fh, 11)));
  EXPECT_EQ(entries[0].handle, "handle of seven");
  EXPECT_EQ(entries[0].flags, O_RDWR);
  EXPECT_EQ(entries[0].nodeid, 107u);
  // The next process goes on recording in the same slots, and a release there is seen again.
  next->Released(7);
  next->Opened(13, 113, "handle of thirteen", O_RDONLY);
  std::unique_ptr<OpenFileJournal> third = AdoptCopyOf(*next);
  EXPECT_THAT(third->Recover(), UnorderedElementsAre(Field(&OpenFileJournal::Entry::fh, 11),
                                                     Field(&OpenFileJournal::Entry::fh, 13)));
}

TEST(OpenFileJournal, ARecordTornByACrashIsSkipped) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal = OpenFileJournal::Create();
  ASSERT_TRUE(journal.ok());
  (*journal)->Opened(5, 105, "whole", O_RDONLY);
  (*journal)->Opened(6, 106, "torn", O_RDONLY);
  // What a crash before the record's last store leaves: its state word is not valid.
  const size_t second_slot_state = sizeof(OpenFileJournal::Header) + sizeof(OpenFileJournal::Slot) +
                                   offsetof(OpenFileJournal::Slot, state);
  void* memory = ::mmap(nullptr, second_slot_state + 4, PROT_READ | PROT_WRITE, MAP_SHARED,
                        (*journal)->fd(), 0);
  ASSERT_NE(memory, MAP_FAILED);
  std::memset(static_cast<char*>(memory) + second_slot_state, 0, 4);
  ::munmap(memory, second_slot_state + 4);
  EXPECT_THAT(AdoptCopyOf(**journal)->Recover(),
              ElementsAre(Field(&OpenFileJournal::Entry::fh, 5)));
}

TEST(OpenFileJournal, WhatCannotBeRecordedIsNot) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal = OpenFileJournal::Create();
  ASSERT_TRUE(journal.ok());
  (*journal)->Opened(1, 101, "", O_RDONLY);  // a filesystem without handles
  (*journal)->Opened(2, 102, std::string(OpenFileJournal::kMaxHandle + 1, 'h'), O_RDONLY);
  (*journal)->Released(3);  // never recorded
  EXPECT_THAT(AdoptCopyOf(**journal)->Recover(), IsEmpty());
}

TEST(OpenFileJournal, AMemfdThatIsNoJournalIsRefused) {
  base::UniqueFd other(::memfd_create("not a journal", MFD_CLOEXEC));
  ASSERT_TRUE(other.valid());
  ASSERT_EQ(::ftruncate(other.get(), 4096), 0);
  EXPECT_TRUE(absl::IsDataLoss(OpenFileJournal::Adopt(std::move(other)).status()));
}

}  // namespace
}  // namespace ringfuse::daemon
