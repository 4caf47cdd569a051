// The control socket without a mount: a request and its reply, a socket left by a daemon that
// died, a second daemon for the same device, a directory others could write, a silent client.
#include "daemon/control_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;

// Device numbers no mount on this machine uses (major 0 minors are handed out from the bottom).
dev_t FakeDevice(unsigned k) { return makedev(0, 0xfff00 + k); }

std::string Echo(std::string_view request) { return "ok echo=" + std::string(request); }

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

}  // namespace
}  // namespace ringfuse::daemon
