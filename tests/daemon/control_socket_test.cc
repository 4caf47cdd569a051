// The control socket without a mount: a request and its reply, a socket left by a daemon that
// died, a second daemon for the same device, a directory others could write, a silent client.
#include "daemon/control/control_socket.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;

// Device numbers no mount on this machine uses (major 0 minors are handed out from the bottom).
dev_t FakeDevice(unsigned k) { return makedev(0, 0xfff00 + k); }

std::string Echo(std::string_view request, ControlServer&) {
  return "ok echo=" + std::string(request);
}

class ControlSocket : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the daemon's socket directory is /run/ringfused: root";
  }
};

TEST_F(ControlSocket, AnswersOneLinePerRequest) {
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(FakeDevice(1), Echo);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->path(), "/run/ringfused/" + std::to_string(FakeDevice(1)) + ".sock");
  absl::StatusOr<std::string> reply =
      SendControlRequestTo(FakeDevice(1), "status", absl::Seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "ok echo=status");
  const std::string path = (*server)->path();
  server->reset();
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket outlived its server";
  EXPECT_TRUE(
      absl::IsNotFound(SendControlRequestTo(FakeDevice(1), "status", absl::Seconds(1)).status()));
}

TEST_F(ControlSocket, ReplacesASocketLeftByADeadDaemon) {
  ASSERT_TRUE(ControlServer::Start(FakeDevice(2), Echo).ok());  // makes the directory
  const std::string path = "/run/ringfused/" + std::to_string(FakeDevice(2)) + ".sock";
  {
    const int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path.c_str());
    ASSERT_EQ(::bind(stale, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ::close(stale);  // the file stays, with no one listening
  }
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(FakeDevice(2), Echo);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(SendControlRequestTo(FakeDevice(2), "x", absl::Seconds(5)).ok());
}

TEST_F(ControlSocket, ASecondServerForTheSameDeviceIsRefused) {
  absl::StatusOr<std::unique_ptr<ControlServer>> first = ControlServer::Start(FakeDevice(3), Echo);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<ControlServer>> second = ControlServer::Start(FakeDevice(3), Echo);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("served by another daemon"));
  EXPECT_TRUE(SendControlRequestTo(FakeDevice(3), "x", absl::Seconds(5)).ok());
}

TEST_F(ControlSocket, RefusesADirectoryOthersCouldWrite) {
  ASSERT_TRUE(ControlServer::Start(FakeDevice(4), Echo).ok());  // makes the directory
  ASSERT_EQ(::chmod("/run/ringfused", 0777), 0);
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(FakeDevice(4), Echo);
  ::chmod("/run/ringfused", 0700);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("that no one else can write"));
}

TEST_F(ControlSocket, ASilentClientDelaysOthersByTheBoundAtMost) {
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(FakeDevice(5), Echo);
  ASSERT_TRUE(server.ok()) << server.status();
  const int silent = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, (*server)->path().c_str());
  ASSERT_EQ(::connect(silent, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> reply =
      SendControlRequestTo(FakeDevice(5), "after", absl::Seconds(20));
  const auto waited = std::chrono::steady_clock::now() - start;
  ::close(silent);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "ok echo=after");
  EXPECT_LT(waited, std::chrono::seconds(15));
}

double CpuSecondsOfThisProcess() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// With every fd in use, accept fails while the client waits in the queue: the server pauses
// between tries (a loop around accept had spun a CPU) and answers once an fd is free.
TEST_F(ControlSocket, AcceptWithoutFreeFdsNeitherSpinsNorLosesTheClient) {
  absl::StatusOr<std::unique_ptr<ControlServer>> server = ControlServer::Start(FakeDevice(7), Echo);
  ASSERT_TRUE(server.ok()) << server.status();
  // A low soft limit, so that filling the table is quick whatever limit the test started with.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 512);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  ASSERT_EQ(errno, EMFILE);
  ASSERT_GE(fillers.size(), 2u);
  const pid_t client = ::fork();
  ASSERT_GE(client, 0);
  if (client == 0) {
    ::close(fillers[0]);  // room for this process's socket only
    absl::StatusOr<std::string> reply =
        SendControlRequestTo(FakeDevice(7), "status", absl::Seconds(10));
    ::_exit(reply.ok() && *reply == "ok echo=status" ? 0 : 1);
  }
  const double cpu_before = CpuSecondsOfThisProcess();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu_starved = CpuSecondsOfThisProcess() - cpu_before;
  for (int fd : fillers) ::close(fd);
  ::setrlimit(RLIMIT_NOFILE, &saved);
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the queued client was lost";
  EXPECT_LT(cpu_starved, 0.3) << "the server spun on accept for a second";
}

// A restart: the old server hands its listener off from an answer, a new one adopts it. Every
// request after the handing one goes to the new server, and the name stays until the new one
// ends.
TEST_F(ControlSocket, AListenerHandedOffIsServedByItsAdopterUnderTheSameName) {
  base::UniqueFd handed;
  absl::StatusOr<std::unique_ptr<ControlServer>> old =
      ControlServer::Start(FakeDevice(8), [&handed](std::string_view, ControlServer& server) {
        handed.reset(::fcntl(server.listener(), F_DUPFD_CLOEXEC, 0));
        server.HandOff();
        return std::string("ok handed=1");
      });
  ASSERT_TRUE(old.ok()) << old.status();
  const std::string path = (*old)->path();
  absl::StatusOr<std::string> reply =
      SendControlRequestTo(FakeDevice(8), "restart", absl::Seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "ok handed=1");
  ASSERT_TRUE(handed.valid());
  absl::StatusOr<std::unique_ptr<ControlServer>> adopted =
      ControlServer::Adopt(std::move(handed), Echo);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ((*adopted)->path(), path);
  for (int i = 0; i < 5; ++i) {
    reply = SendControlRequestTo(FakeDevice(8), "status", absl::Seconds(5));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(*reply, "ok echo=status") << "the server that handed off answered";
  }
  old->reset();
  EXPECT_EQ(::access(path.c_str(), F_OK), 0) << "the old server removed its successor's socket";
  reply = SendControlRequestTo(FakeDevice(8), "status", absl::Seconds(5));
  EXPECT_TRUE(reply.ok() && *reply == "ok echo=status") << reply.status();
  adopted->reset();
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket outlived its last server";
}

TEST_F(ControlSocket, AdoptRefusesASocketThatDoesNotListen) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  base::UniqueFd other(pair[1]);
  absl::StatusOr<std::unique_ptr<ControlServer>> adopted =
      ControlServer::Adopt(base::UniqueFd(pair[0]), Echo);
  ASSERT_FALSE(adopted.ok());
  EXPECT_THAT(adopted.status().message(), HasSubstr("not a listening socket"));
}

}  // namespace
}  // namespace ringfuse::daemon
