// The change journal a kept ringfused writes to a memfd: what one process records, begun or done,
// another (the one after a crash) finds through its own copy of the memfd, by unique, the newest
// record of each; records stay for the process after that, and the oldest give way once the
// ring is full, never one still in progress; a record torn by a crash is skipped; a memfd that
// is no journal is refused.
#include "daemon/crash/change_journal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::UnorderedElementsAre;

std::unique_ptr<ChangeJournal> NewJournal() {
  absl::StatusOr<std::unique_ptr<ChangeJournal>> journal = ChangeJournal::Create();
  EXPECT_TRUE(journal.ok()) << journal.status();
  return journal.ok() ? std::move(*journal) : nullptr;
}

// The keeper's copy of the memfd, as the next daemon gets it.
std::unique_ptr<ChangeJournal> AdoptCopyOf(const ChangeJournal& journal) {
  absl::StatusOr<std::unique_ptr<ChangeJournal>> adopted =
      ChangeJournal::Adopt(base::UniqueFd(::fcntl(journal.fd(), F_DUPFD_CLOEXEC, 0)));
  EXPECT_TRUE(adopted.ok()) << adopted.status();
  return adopted.ok() ? std::move(*adopted) : nullptr;
}

TEST(ChangeJournal, TheNextProcessFindsWhatEachChangeDid) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  journal->Done(journal->Begin(10, Opcode::kMkdir, 0), 0);
  journal->Done(journal->Begin(12, Opcode::kUnlink, 0), -ENOENT);
  journal->Begin(14, Opcode::kRename, 4711);  // killed in the middle
  journal->Done(journal->Begin(16, Opcode::kWrite, 300), 5);
  std::unique_ptr<ChangeJournal> next = AdoptCopyOf(*journal);
  ASSERT_NE(next, nullptr);
  const ChangeJournal::Outcomes outcomes = next->Recover();
  ASSERT_THAT(outcomes, UnorderedElementsAre(Key(10), Key(12), Key(14), Key(16)));
  EXPECT_EQ(outcomes.at(10).opcode, Opcode::kMkdir);
  EXPECT_TRUE(outcomes.at(10).done);
  EXPECT_EQ(outcomes.at(10).result, 0);
  EXPECT_EQ(outcomes.at(12).result, -ENOENT);
  EXPECT_FALSE(outcomes.at(14).done);
  EXPECT_EQ(outcomes.at(14).evidence, 4711u);
  EXPECT_EQ(outcomes.at(16).result, 5);
  EXPECT_EQ(outcomes.at(16).evidence, 300u);
}

// A request resent to the next daemon and done there is recorded again; a crash of that daemon
// too leaves the next one both the first records and the newer one, which wins.
TEST(ChangeJournal, RecordsStayForTheProcessAfterTheNextAndTheNewestWins) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  journal->Begin(20, Opcode::kMkdir, 0);
  journal->Begin(22, Opcode::kCreate, 0);
  std::unique_ptr<ChangeJournal> second = AdoptCopyOf(*journal);
  ASSERT_EQ(second->Recover().size(), 2u);
  second->Done(second->Begin(20, Opcode::kMkdir, 0), -EEXIST);
  std::unique_ptr<ChangeJournal> third = AdoptCopyOf(*second);
  const ChangeJournal::Outcomes outcomes = third->Recover();
  ASSERT_THAT(outcomes, UnorderedElementsAre(Key(20), Key(22)));
  EXPECT_TRUE(outcomes.at(20).done);
  EXPECT_EQ(outcomes.at(20).result, -EEXIST);
  EXPECT_FALSE(outcomes.at(22).done);
}

TEST(ChangeJournal, TheOldestRecordsGiveWayOnceTheRingIsFull) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  constexpr uint64_t kMore = 10;
  for (uint64_t unique = 1; unique <= ChangeJournal::kSlots + kMore; ++unique) {
    journal->Done(journal->Begin(unique, Opcode::kUnlink, 0), static_cast<int64_t>(unique));
  }
  const ChangeJournal::Outcomes outcomes = AdoptCopyOf(*journal)->Recover();
  EXPECT_EQ(outcomes.size(), ChangeJournal::kSlots);
  EXPECT_FALSE(outcomes.contains(kMore));
  EXPECT_TRUE(outcomes.contains(kMore + 1));
  EXPECT_EQ(outcomes.at(ChangeJournal::kSlots + kMore).result,
            static_cast<int64_t>(ChangeJournal::kSlots + kMore));
}

// A change still being made (a slow backing call) keeps its record however many others pass it.
TEST(ChangeJournal, ARecordInProgressIsNeverWrittenOver) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  const size_t slow = journal->Begin(1, Opcode::kRename, 77);
  for (uint64_t unique = 2; unique <= 2 * ChangeJournal::kSlots; ++unique) {
    journal->Done(journal->Begin(unique, Opcode::kUnlink, 0), 0);
  }
  journal->Done(slow, -EXDEV);
  const ChangeJournal::Outcomes outcomes = AdoptCopyOf(*journal)->Recover();
  ASSERT_TRUE(outcomes.contains(1));
  EXPECT_EQ(outcomes.at(1).opcode, Opcode::kRename);
  EXPECT_EQ(outcomes.at(1).result, -EXDEV);
  EXPECT_EQ(outcomes.at(1).evidence, 77u);
}

// A crash between the slot's `state` cleared and set again leaves no record there: what the
// slot held before is not taken for the new request's.
TEST(ChangeJournal, ARecordTornByACrashIsSkipped) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  journal->Done(journal->Begin(30, Opcode::kMkdir, 0), 0);
  journal->Done(journal->Begin(32, Opcode::kMkdir, 0), 0);
  void* memory =
      ::mmap(nullptr, ChangeJournal::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, journal->fd(), 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* slots = reinterpret_cast<ChangeJournal::Slot*>(static_cast<char*>(memory) +
                                                       sizeof(ChangeJournal::Header));
  slots[1].state = 0;  // the second, torn
  ::munmap(memory, ChangeJournal::kBytes);
  EXPECT_THAT(AdoptCopyOf(*journal)->Recover(), UnorderedElementsAre(Key(30)));
}

// A count of slots taken near 2^64, which no daemon reaches (a forged or corrupt header), would
// wrap round at the next changes, and the daemon after the next crash would find almost nothing:
// neither those changes nor the records before. The records stay, and the changes made after
// the recovery are found.
TEST(ChangeJournal, ACountOfSlotsTakenNear2To64DoesNotLoseTheRecords) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  void* memory =
      ::mmap(nullptr, ChangeJournal::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, journal->fd(), 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* header = static_cast<ChangeJournal::Header*>(memory);
  auto* slots = reinterpret_cast<ChangeJournal::Slot*>(header + 1);
  slots[ChangeJournal::kSlots - 2] = {ChangeJournal::kDone, static_cast<uint32_t>(Opcode::kMkdir),
                                      50, -EEXIST, 0};
  header->taken = ~uint64_t{0};  // the newest record in the slot before kSlots - 1
  ::munmap(memory, ChangeJournal::kBytes);
  std::unique_ptr<ChangeJournal> next = AdoptCopyOf(*journal);
  ASSERT_NE(next, nullptr);
  ASSERT_THAT(next->Recover(), UnorderedElementsAre(Key(50)));
  next->Done(next->Begin(60, Opcode::kMkdir, 0), 0);
  next->Done(next->Begin(61, Opcode::kUnlink, 0), -ENOENT);
  const ChangeJournal::Outcomes outcomes = AdoptCopyOf(*next)->Recover();
  ASSERT_THAT(outcomes, UnorderedElementsAre(Key(50), Key(60), Key(61)));
  EXPECT_EQ(outcomes.at(50).result, -EEXIST);
  EXPECT_EQ(outcomes.at(61).result, -ENOENT);
}

TEST(ChangeJournal, AMemfdThatIsNoJournalIsRefused) {
  base::UniqueFd memfd(::memfd_create("not a journal", MFD_CLOEXEC));
  ASSERT_TRUE(memfd.valid());
  ASSERT_EQ(::ftruncate(memfd.get(), 4096), 0);
  absl::StatusOr<std::unique_ptr<ChangeJournal>> adopted = ChangeJournal::Adopt(std::move(memfd));
  EXPECT_EQ(adopted.status().code(), absl::StatusCode::kDataLoss) << adopted.status();
}

// A holder of the memfd (the keeper, or whoever it hands it to) cannot resize it: shrunk, the
// daemon's next access past the end would be SIGBUS. The control: an unsealed memfd of the right
// size, which a holder could shrink, is refused.
TEST(ChangeJournal, ItsMemfdCannotBeResizedAndAnUnsealedOneIsRefused) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  EXPECT_NE(::ftruncate(journal->fd(), 4096), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(journal->fd(), 2 * ChangeJournal::kBytes), 0);
  EXPECT_NE(::fcntl(journal->fd(), F_ADD_SEALS, F_SEAL_WRITE), 0) << "no seal can be changed";
  ASSERT_NE(AdoptCopyOf(*journal), nullptr) << "a sealed journal is adopted";

  base::UniqueFd unsealed(::memfd_create("unsealed", MFD_CLOEXEC));
  ASSERT_TRUE(unsealed.valid());
  ASSERT_EQ(::ftruncate(unsealed.get(), ChangeJournal::kBytes), 0);
  absl::StatusOr<std::unique_ptr<ChangeJournal>> adopted =
      ChangeJournal::Adopt(std::move(unsealed));
  EXPECT_EQ(adopted.status().code(), absl::StatusCode::kDataLoss) << adopted.status();
  EXPECT_THAT(adopted.status().message(), HasSubstr("not sealed"));
}

TEST(ChangeJournal, ANewJournalHoldsNothing) {
  std::unique_ptr<ChangeJournal> journal = NewJournal();
  ASSERT_NE(journal, nullptr);
  EXPECT_THAT(journal->Recover(), IsEmpty());
}

}  // namespace
}  // namespace ringfuse::daemon
