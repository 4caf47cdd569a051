// The integrity exerciser: it passes on local directories, and it catches a
// file changed behind its back, so a pass means something.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "tests/daemon/integrity_exerciser.h"
#include "gtest/gtest.h"

namespace ringfuse::integrity {
namespace {

// A fresh directory under `parent`, removed with what it holds.
class TempDir {
public:
  explicit TempDir(const std::string &parent = "/tmp") {
    std::string name = parent + "/ringfuse-integrity.XXXXXX";
    if (::mkdtemp(name.data()) != nullptr)
      path_ = name;
  }
  ~TempDir() {
    if (!path_.empty())
      std::filesystem::remove_all(path_);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }

private:
  std::string path_;
};

ExerciserOptions Seeded(const std::string &directory, uint64_t seed,
                        int operations) {
  ExerciserOptions options;
  options.directory = directory;
  options.seed = seed;
  options.operations = operations;
  return options;
}

TEST(IntegrityExerciser, PassesOnLocalDirectories) {
  for (const char *parent : {"/tmp", "/dev/shm"}) {
    TempDir dir(parent);
    ASSERT_FALSE(dir.path().empty()) << parent;
    for (uint64_t seed : {1, 2}) {
      const ExerciserReport report =
          RunExerciser(Seeded(dir.path(), seed, 2000));
      EXPECT_TRUE(report.ok()) << report.failure;
    }
  }
}

// Flips one byte of file-0 through an fd of the test's own, after `step`;
// remembers where.
struct Corruption {
  std::string path;
  int step = 0;
  uint64_t offset = 0;
  int original = -1;

  void operator()(int done) {
    if (done != step)
      return;
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

// Seed 4 reads file-0's middle byte within a few steps after step 150 (a seed
// that overwrites or truncates the byte first leaves nothing to catch).
constexpr uint64_t kCorruptedSeed = 4;
constexpr int kCorruptedOperations = 400;

ExerciserReport RunCorrupted(const std::string &directory,
                             Corruption &corruption) {
  ExerciserOptions options =
      Seeded(directory, kCorruptedSeed, kCorruptedOperations);
  options.after_step = [&corruption](int step) { corruption(step); };
  return RunExerciser(options);
}

void ExpectReported(const ExerciserReport &report,
                    const Corruption &corruption) {
  ASSERT_FALSE(report.ok()) << "the corrupted byte went unnoticed";
  EXPECT_GT(report.failed_step, corruption.step) << report.failure;
  ASSERT_TRUE(report.difference.has_value()) << report.failure;
  EXPECT_EQ(report.difference->offset, corruption.offset) << report.failure;
  EXPECT_EQ(report.difference->expected, corruption.original) << report.failure;
  EXPECT_EQ(report.difference->actual, corruption.original ^ 0xff)
      << report.failure;
  EXPECT_NE(report.failure.find(absl::StrFormat(
                "seed %d, step %d", kCorruptedSeed, report.failed_step)),
            std::string::npos)
      << report.failure;
  EXPECT_NE(
      report.failure.find(absl::StrFormat("#%d ", report.failed_step - 19)),
      std::string::npos)
      << "the report lists the last 20 operations:\n"
      << report.failure;
}

std::string PathOfFirstFile(const TempDir &dir) {
  return dir.path() + "/" + ExerciserFileName(0);
}

TEST(IntegrityExerciser, ReportsAByteChangedBehindItsBackAtTheNextReadOfIt) {
  TempDir dir;
  Corruption corruption{.path = PathOfFirstFile(dir), .step = 150};
  const ExerciserReport report = RunCorrupted(dir.path(), corruption);
  ExpectReported(report, corruption);
  EXPECT_LT(report.failed_step, kCorruptedOperations)
      << "a read saw it before the final check";
}

TEST(IntegrityExerciser,
     ReportsAByteChangedAfterTheLastStepInTheFinalComparison) {
  TempDir dir;
  Corruption corruption{.path = PathOfFirstFile(dir),
                        .step = kCorruptedOperations - 1};
  const ExerciserReport report = RunCorrupted(dir.path(), corruption);
  ExpectReported(report, corruption);
  EXPECT_EQ(report.failed_step, kCorruptedOperations);
}

TEST(IntegrityExerciser, TheSeedAloneReplaysARun) {
  TempDir dir;
  Corruption first{.path = PathOfFirstFile(dir), .step = 150};
  Corruption second = first;
  const std::string first_failure = RunCorrupted(dir.path(), first).failure;
  EXPECT_FALSE(first_failure.empty());
  EXPECT_EQ(RunCorrupted(dir.path(), second).failure, first_failure);
}

} // namespace
} // namespace ringfuse::integrity
