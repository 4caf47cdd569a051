// The keeper's side of a kept session, without a kernel: a daemon that starts finds nothing kept
// and deposits; the next finds the connection, its note and its incarnation; a daemon that
// breaks the protocol (an unknown kind, a truncated or oversized note, a second deposit, fds
// where none belong) is refused, leaks no fd into the keeper and does not lose what was kept.
#include "transport/keeper_protocol.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "base/record_fields.h"
#include "gtest/gtest.h"
#include "ringfuse/keeper.h"
#include "tests/open_fds.h"
#include "transport/fd_passing.h"
#include "transport/handover_record.h"

namespace ringfuse::internal {
namespace {

using ringfuse::testing::OpenFdCount;

struct Ends {
  base::UniqueFd daemon, keeper;
};

Ends Connect() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0)
      << std::strerror(errno);
  return {base::UniqueFd(fds[0]), base::UniqueFd(fds[1])};
}

// What a daemon deposits: any fd stands in for /dev/fuse here.
HandoverRecord Connection() {
  HandoverRecord record;
  record.mountpoint = "/mnt/kept";
  record.connection_id = 42;
  record.negotiated.minor = 45;
  return record;
}

void Deposit(const Ends& ends, ConnectionKeeper& keeper, int fd) {
  ASSERT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperDeposit{}).ok());
  ASSERT_TRUE(SendHandover(ends.daemon.get(), Connection(), std::span<const int>(&fd, 1)).ok());
  ASSERT_TRUE(keeper.ServeOne(ends.keeper.get()).ok());
}

KeeperAnswer Hello(const Ends& ends, ConnectionKeeper& keeper) {
  EXPECT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperHello{}).ok());
  EXPECT_TRUE(keeper.ServeOne(ends.keeper.get()).ok());
  absl::StatusOr<KeeperAnswer> answer = ReceiveKeeperAnswer(ends.daemon.get(), absl::Seconds(5));
  EXPECT_TRUE(answer.ok()) << answer.status();
  return answer.ok() ? *answer : KeeperAnswer{};
}

ino_t InodeOf(int fd) {
  struct stat attr {};
  EXPECT_EQ(::fstat(fd, &attr), 0);
  return attr.st_ino;
}

TEST(ConnectionKeeper, AFirstDaemonIsToldToMountTheNextGetsTheConnectionItsNoteAndIncarnation) {
  ConnectionKeeper keeper;
  const Ends first = Connect();
  EXPECT_TRUE(std::holds_alternative<KeeperFresh>(Hello(first, keeper)));
  const base::UniqueFd dev(::open("/dev/null", O_RDWR | O_CLOEXEC));
  Deposit(first, keeper, dev.get());
  ASSERT_TRUE(SendDaemonMessage(first.daemon.get(), KeeperNote{"revision r2"}).ok());
  ASSERT_TRUE(keeper.ServeOne(first.keeper.get()).ok());
  ASSERT_TRUE(keeper.holds_connection());
  EXPECT_EQ(keeper.mountpoint(), "/mnt/kept");

  for (uint32_t incarnation : {1u, 2u}) {
    const Ends next = Connect();
    const KeeperAnswer answer = Hello(next, keeper);
    ASSERT_TRUE(std::holds_alternative<KeeperKept>(answer));
    EXPECT_EQ(std::get<KeeperKept>(answer).incarnation, incarnation);
    EXPECT_EQ(std::get<KeeperKept>(answer).note, "revision r2");
    absl::StatusOr<ReceivedHandover> connection = ReceiveHandover(next.daemon.get());
    ASSERT_TRUE(connection.ok()) << connection.status();
    EXPECT_EQ(connection->record.mountpoint, "/mnt/kept");
    EXPECT_EQ(connection->record.connection_id, 42u);
    EXPECT_EQ(connection->record.negotiated.minor, 45u);
    ASSERT_EQ(connection->fds.size(), 1u);
    EXPECT_EQ(InodeOf(connection->fds[0].get()), InodeOf(dev.get()));  // the same open file
  }
  EXPECT_EQ(keeper.recoveries(), 2u);
}

TEST(ConnectionKeeper, ADaemonThatClosedItsEndIsNotFound) {
  ConnectionKeeper keeper;
  Ends ends = Connect();
  ends.daemon.reset();
  EXPECT_TRUE(absl::IsNotFound(keeper.ServeOne(ends.keeper.get())));
}

TEST(ConnectionKeeper, ASecondDepositIsRefusedAndTheFirstStaysKept) {
  ConnectionKeeper keeper;
  const Ends ends = Connect();
  const base::UniqueFd first(::open("/dev/null", O_RDWR | O_CLOEXEC));
  Deposit(ends, keeper, first.get());
  const size_t fds_before = OpenFdCount();
  const base::UniqueFd second(::open("/dev/zero", O_RDWR | O_CLOEXEC));
  const int fd = second.get();
  ASSERT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperDeposit{}).ok());
  ASSERT_TRUE(SendHandover(ends.daemon.get(), Connection(), std::span<const int>(&fd, 1)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(keeper.ServeOne(ends.keeper.get())));
  EXPECT_EQ(OpenFdCount(), fds_before + 1);  // `second` alone: the copy received was closed
  EXPECT_EQ(InodeOf(keeper.dev_fd()), InodeOf(first.get()));
}

TEST(ConnectionKeeper, KeepsTheApplicationsFdsAndRefusesMoreThanItsLimit) {
  ConnectionKeeper keeper;
  const Ends ends = Connect();
  const base::UniqueFd dev(::open("/dev/null", O_RDWR | O_CLOEXEC));
  const base::UniqueFd state(::open("/dev/zero", O_RDONLY | O_CLOEXEC));
  const size_t fds_before = OpenFdCount();
  std::vector<int> too_many(2 + kMaxKeptFds, dev.get());
  ASSERT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperDeposit{}).ok());
  ASSERT_TRUE(SendHandover(ends.daemon.get(), Connection(), too_many).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(keeper.ServeOne(ends.keeper.get())));
  EXPECT_FALSE(keeper.holds_connection());
  EXPECT_EQ(OpenFdCount(), fds_before);

  const int kept[] = {dev.get(), state.get()};
  ASSERT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperDeposit{}).ok());
  ASSERT_TRUE(SendHandover(ends.daemon.get(), Connection(), kept).ok());
  ASSERT_TRUE(keeper.ServeOne(ends.keeper.get()).ok());
  const Ends next = Connect();
  ASSERT_TRUE(std::holds_alternative<KeeperKept>(Hello(next, keeper)));
  absl::StatusOr<ReceivedHandover> connection = ReceiveHandover(next.daemon.get());
  ASSERT_TRUE(connection.ok()) << connection.status();
  ASSERT_EQ(connection->fds.size(), 2u);
  EXPECT_EQ(InodeOf(connection->fds[1].get()), InodeOf(state.get()));
}

// Raw messages a confused or hostile daemon may send instead of the protocol's.
void SendRaw(int socket, const std::string& bytes, int fd = -1) {
  const ConstBytes data(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  if (fd < 0) {
    ASSERT_TRUE(SendWithFds(socket, data, {}).ok());
  } else {
    ASSERT_TRUE(SendWithFds(socket, data, std::span<const int>(&fd, 1)).ok());
  }
}

std::string Kind(uint32_t kind) {
  std::string message;
  base::PutField(message, kind);
  return message;
}

TEST(ConnectionKeeper, MalformedMessagesAreRefusedWithoutLeakingFdsOrLosingTheConnection) {
  ConnectionKeeper keeper;
  const Ends ends = Connect();
  const base::UniqueFd dev(::open("/dev/null", O_RDWR | O_CLOEXEC));
  Deposit(ends, keeper, dev.get());
  std::string truncated_note = Kind(3);
  base::PutField(truncated_note, uint64_t{100});
  truncated_note += "short";
  std::string trailing = Kind(1) + "x";
  const std::string cases[] = {"ab", Kind(99), Kind(5), truncated_note, trailing};
  const size_t fds_before = OpenFdCount();
  for (const std::string& message : cases) {
    for (const int attached : {-1, dev.get()}) {  // and with an fd where none belongs
      SCOPED_TRACE(::testing::PrintToString(message.size()) + " bytes, fd " +
                   ::testing::PrintToString(attached));
      SendRaw(ends.daemon.get(), message, attached);
      const absl::Status served = keeper.ServeOne(ends.keeper.get());
      EXPECT_TRUE(absl::IsInvalidArgument(served)) << served;
      EXPECT_EQ(OpenFdCount(), fds_before);
    }
  }
  // A well-formed message still works after them.
  const Ends next = Connect();
  EXPECT_TRUE(std::holds_alternative<KeeperKept>(Hello(next, keeper)));
}

TEST(ConnectionKeeper, ANoteLargerThanTheLimitIsRefusedBeforeItIsSent) {
  const Ends ends = Connect();
  const absl::Status sent =
      SendDaemonMessage(ends.daemon.get(), KeeperNote{std::string(kMaxKeptNote + 1, 'x')});
  EXPECT_TRUE(absl::IsInvalidArgument(sent)) << sent;
  EXPECT_TRUE(
      SendDaemonMessage(ends.daemon.get(), KeeperNote{std::string(kMaxKeptNote, 'x')}).ok());
}

// A daemon that frames a longer note itself: the keeper's answer would carry it, in a message
// longer than any daemon reads, and no daemon after a crash could start. Refused, and the note
// kept before it is the one handed back.
TEST(ConnectionKeeper, ANoteLargerThanTheLimitIsRefusedWhenReceived) {
  ConnectionKeeper keeper;
  const Ends ends = Connect();
  const base::UniqueFd dev(::open("/dev/null", O_RDWR | O_CLOEXEC));
  Deposit(ends, keeper, dev.get());
  ASSERT_TRUE(SendDaemonMessage(ends.daemon.get(), KeeperNote{"r1"}).ok());
  ASSERT_TRUE(keeper.ServeOne(ends.keeper.get()).ok());
  std::string long_note = Kind(3);
  base::PutString(long_note, std::string(kMaxKeptNote + 1, 'x'));
  SendRaw(ends.daemon.get(), long_note);
  const absl::Status served = keeper.ServeOne(ends.keeper.get());
  EXPECT_TRUE(absl::IsInvalidArgument(served)) << served;
  const Ends next = Connect();
  const KeeperAnswer answer = Hello(next, keeper);
  ASSERT_TRUE(std::holds_alternative<KeeperKept>(answer));
  EXPECT_EQ(std::get<KeeperKept>(answer).note, "r1");
}

TEST(KeeperAnswer, AKeeperThatSaysNothingTimesOutAndOneThatLeftIsUnavailable) {
  Ends ends = Connect();
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      ReceiveKeeperAnswer(ends.daemon.get(), absl::Milliseconds(20)).status()));
  ends.keeper.reset();
  EXPECT_TRUE(
      absl::IsUnavailable(ReceiveKeeperAnswer(ends.daemon.get(), absl::Seconds(1)).status()));
}

}  // namespace
}  // namespace ringfuse::internal
