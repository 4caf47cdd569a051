// The integrity exerciser: it passes on local directories, it catches a file changed behind its
// back (so a pass means something), and it runs through the passthrough daemon on every
// transport and caching configuration, after which the mount and SOURCE must hold the same bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/session_options.h"
#include "gtest/gtest.h"
#include "tests/daemon/integrity_exerciser.h"
#include "tests/daemon/kernel_passthrough.h"
#include "tests/daemon/test_files.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::integrity {
namespace {

using ringfuse::daemon::DaemonOptions;
using ringfuse::daemon::PassthroughFs;
using ringfuse::testing::ReadFile;
using ringfuse::testing::ServedMount;
using ringfuse::testing::TempDir;

constexpr std::string_view kTempPrefix = "ringfuse-integrity";

ExerciserOptions Seeded(const std::string& directory, uint64_t seed, int operations) {
  ExerciserOptions options;
  options.directory = directory;
  options.seed = seed;
  options.operations = operations;
  return options;
}

TEST(IntegrityExerciser, PassesOnLocalDirectories) {
  for (const char* parent : {"/tmp", "/dev/shm"}) {
    TempDir dir(kTempPrefix, parent);
    ASSERT_FALSE(dir.path().empty()) << parent;
    for (uint64_t seed : {1, 2}) {
      const ExerciserReport report = RunExerciser(Seeded(dir.path(), seed, 2000));
      EXPECT_TRUE(report.ok()) << report.failure;
    }
  }
}

// Flips one byte of file-0 through an fd of the test's own, after `step`; remembers where.
struct Corruption {
  std::string path;
  int step = 0;
  uint64_t offset = 0;
  int original = -1;

  void operator()(int done) {
    if (done != step) return;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    struct stat st;
    ASSERT_EQ(::fstat(fd, &st), 0);
    ASSERT_GT(st.st_size, 0) << "choose a step after which file-0 holds data";
    offset = static_cast<uint64_t>(st.st_size) / 2;
    unsigned char byte = 0;
    ASSERT_EQ(::pread(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    original = byte;
    byte ^= 0xff;
    ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(offset)), 1);
    ::close(fd);
  }
};

// Seed 4 reads file-0's middle byte within a few steps after step 150 (a seed that overwrites
// or truncates the byte first leaves nothing to catch).
constexpr uint64_t kCorruptedSeed = 4;
constexpr int kCorruptedOperations = 400;

ExerciserReport RunCorrupted(const std::string& directory, Corruption& corruption) {
  ExerciserOptions options = Seeded(directory, kCorruptedSeed, kCorruptedOperations);
  options.after_step = [&corruption](int step) { corruption(step); };
  return RunExerciser(options);
}

void ExpectReported(const ExerciserReport& report, const Corruption& corruption) {
  ASSERT_FALSE(report.ok()) << "the corrupted byte went unnoticed";
  EXPECT_GT(report.failed_step, corruption.step) << report.failure;
  ASSERT_TRUE(report.difference.has_value()) << report.failure;
  EXPECT_EQ(report.difference->offset, corruption.offset) << report.failure;
  EXPECT_EQ(report.difference->expected, corruption.original) << report.failure;
  EXPECT_EQ(report.difference->actual, corruption.original ^ 0xff) << report.failure;
  EXPECT_NE(
      report.failure.find(absl::StrFormat("seed %d, step %d", kCorruptedSeed, report.failed_step)),
      std::string::npos)
      << report.failure;
  EXPECT_NE(report.failure.find(absl::StrFormat("#%d ", report.failed_step - 19)),
            std::string::npos)
      << "the report lists the last 20 operations:\n"
      << report.failure;
}

std::string PathOfFirstFile(const TempDir& dir) { return dir.path() + "/" + ExerciserFileName(0); }

TEST(IntegrityExerciser, ReportsAByteChangedBehindItsBackAtTheNextReadOfIt) {
  TempDir dir(kTempPrefix);
  Corruption corruption{.path = PathOfFirstFile(dir), .step = 150};
  const ExerciserReport report = RunCorrupted(dir.path(), corruption);
  ExpectReported(report, corruption);
  EXPECT_LT(report.failed_step, kCorruptedOperations) << "a read saw it before the final check";
}

TEST(IntegrityExerciser, ReportsAByteChangedAfterTheLastStepInTheFinalComparison) {
  TempDir dir(kTempPrefix);
  Corruption corruption{.path = PathOfFirstFile(dir), .step = kCorruptedOperations - 1};
  const ExerciserReport report = RunCorrupted(dir.path(), corruption);
  ExpectReported(report, corruption);
  EXPECT_EQ(report.failed_step, kCorruptedOperations);
}

TEST(IntegrityExerciser, TheSeedAloneReplaysARun) {
  TempDir dir(kTempPrefix);
  Corruption first{.path = PathOfFirstFile(dir), .step = 150};
  Corruption second = first;
  const std::string first_failure = RunCorrupted(dir.path(), first).failure;
  EXPECT_FALSE(first_failure.empty());
  EXPECT_EQ(RunCorrupted(dir.path(), second).failure, first_failure);
}

// How much each mounted configuration runs: a few thousand operations for each of a few seeds,
// sized so that one test stays well under 20 s under ASan on two CPUs.
constexpr uint64_t kSeeds[] = {11, 12, 13};
constexpr int kOperations = 2000;

class IntegrityThroughPassthrough : public ringfuse::testing::TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    source_ = std::make_unique<TempDir>(kTempPrefix);
    ASSERT_FALSE(source_->path().empty());
  }
  void TearDown() override {
    mount_.reset();
    fs_.reset();
    source_.reset();
  }

  // `options.source` only names the mount (mount(2) refuses an empty one); the served directory
  // is the fd given to PassthroughFs, and ServedMount picks the mountpoint.
  absl::Status Mount(DaemonOptions options) {
    options.source = source_->path();
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_->path().c_str(), O_PATH | O_CLOEXEC)), options);
    SessionOptions session = daemon::MakeSessionOptions(options);
    session.backing_files = &fs_->backing_files();
    absl::StatusOr<std::unique_ptr<ServedMount>> mount =
        ServedMount::Start(*fs_, GetParam(), session);
    if (!mount.ok()) return mount.status();
    mount_ = std::move(*mount);
    return absl::OkStatus();
  }

  void MountAndExercise(const DaemonOptions& options, OpKinds refused = {}) {
    const absl::Status mounted = Mount(options);
    ASSERT_TRUE(mounted.ok()) << mounted;
    ExerciseEverySeed(refused);
  }

  // Every seed through the mount, each followed by a comparison of the mount's files with
  // SOURCE's, once the exerciser has closed them. The mount must take every operation kind but
  // those `refused`, so that a refusal cannot quietly shrink what is tested.
  void ExerciseEverySeed(OpKinds refused) {
    for (uint64_t seed : kSeeds) {
      const ExerciserReport report = RunExerciser(Seeded(mount_->root(), seed, kOperations));
      ASSERT_TRUE(report.ok()) << report.failure;
      EXPECT_EQ(report.refused, refused) << absl::StrJoin(report.skipped, "\n");
      ExpectSourceHoldsWhatTheMountShows(seed);
    }
  }

  void ExpectSourceHoldsWhatTheMountShows(uint64_t seed) {
    for (int file = 0; file < ExerciserOptions().files; ++file) {
      const std::string name = ExerciserFileName(file);
      const std::string in_source = ReadFile(source_->path() + "/" + name);
      const std::optional<Difference> difference =
          FirstDifference(ReadFile(mount_->Path(name)), in_source, 0);
      if (!difference) continue;
      ADD_FAILURE() << "seed " << seed << ": " << name
                    << " in SOURCE differs from the mount at offset " << difference->offset
                    << "\n  mount  " << difference->expected_context << "\n  source "
                    << difference->actual_context;
    }
  }

  std::unique_ptr<TempDir> source_;
  std::unique_ptr<PassthroughFs> fs_;
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(IntegrityThroughPassthrough, DefaultCaching) { MountAndExercise(DaemonOptions{}); }

TEST_P(IntegrityThroughPassthrough, CacheOff) {
  DaemonOptions options;
  options.cache = false;
  options.entry_timeout = options.attr_timeout = options.negative_timeout = {};  // as -o cache=off
  // A direct_io file cannot be mapped shared unless the server asks for DIRECT_IO_ALLOW_MMAP.
  MountAndExercise(options, Only({OpKind::kMmapWrite, OpKind::kMmapRead}));
}

TEST_P(IntegrityThroughPassthrough, WritebackCache) {
  DaemonOptions options;
  options.writeback_cache = true;
  MountAndExercise(options);
}

// The kernel reads and writes SOURCE's files itself: the daemon serves no READ or WRITE.
TEST_P(IntegrityThroughPassthrough, KernelPassthrough) {
  DaemonOptions options;
  options.passthrough = true;
  if (const absl::Status mounted = Mount(options); !mounted.ok()) {
    RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(mounted);
  }
  if (const absl::Status works = fs_->CheckPassthroughWorks(); !works.ok()) {
    RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(works);
  }
  ASSERT_NO_FATAL_FAILURE(ExerciseEverySeed({}));
  EXPECT_EQ(fs_->counts().reads, 0u);
  EXPECT_EQ(fs_->counts().writes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, IntegrityThroughPassthrough,
                         ringfuse::testing::kEveryTransport, ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::integrity
