#include "tests/daemon/integrity_exerciser.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"

namespace ringfuse::integrity {
namespace {

constexpr size_t kLogLength = 20;
constexpr size_t kReadChunk = 64 << 10;

const OpKinds kDirectKinds = Only({OpKind::kDirectWrite, OpKind::kDirectRead});
const OpKinds kMappingKinds = Only({OpKind::kMmapWrite, OpKind::kMmapRead});

// What went wrong at one step.
struct Failure {
  std::string what;
  std::optional<Difference> difference;
};
using Outcome = std::optional<Failure>;

Failure ErrnoFailure(std::string_view call) {
  return {absl::StrFormat("%s failed: %s", call, std::strerror(errno)), std::nullopt};
}

std::string ByteText(int byte) { return byte < 0 ? "EOF" : absl::StrFormat("0x%02x", byte); }

Outcome Compare(std::string_view what, std::string_view expected, std::string_view actual,
                uint64_t base) {
  std::optional<Difference> difference = FirstDifference(expected, actual, base);
  if (!difference) return std::nullopt;
  return Failure{absl::StrFormat("%s: expected %d bytes, got %d; first difference at offset %d: "
                                 "expected %s, got %s",
                                 what, expected.size(), actual.size(), difference->offset,
                                 ByteText(difference->expected), ByteText(difference->actual)),
                 difference};
}

Outcome CheckWritten(ssize_t written, size_t length, std::string_view call) {
  if (written < 0) return ErrnoFailure(call);
  if (static_cast<size_t>(written) == length) return std::nullopt;
  return Failure{absl::StrFormat("%s wrote %d of %d bytes", call, written, length), std::nullopt};
}

Outcome Open(const std::string& path, int flags, base::UniqueFd& fd) {
  fd.reset(::open(path.c_str(), flags | O_CLOEXEC, 0644));
  if (fd.valid()) return std::nullopt;
  const int error = errno;
  return Failure{absl::StrFormat("open(%s, %#o) failed: %s", path, flags, std::strerror(error)),
                 std::nullopt};
}

// read(2) from the start to the end, in chunks, as a program reading a file through does.
Outcome ReadWhole(int fd, std::string& data) {
  if (::lseek(fd, 0, SEEK_SET) != 0) return ErrnoFailure("lseek");
  data.clear();
  for (;;) {
    const size_t used = data.size();
    data.resize(used + kReadChunk);
    const ssize_t length = ::read(fd, data.data() + used, kReadChunk);
    if (length < 0) return ErrnoFailure("read");
    data.resize(used + static_cast<size_t>(length));
    if (length == 0) return std::nullopt;
  }
}

struct FreeDeleter {
  void operator()(char* buffer) const { std::free(buffer); }
};
using AlignedBuffer = std::unique_ptr<char[], FreeDeleter>;

AlignedBuffer MakeAlignedBuffer(size_t size) {
  return AlignedBuffer(static_cast<char*>(std::aligned_alloc(kDirectAlignment, size)));
}

// A MAP_SHARED window on [offset, offset + length) of a file; mmap wants a page-aligned start.
class Mapping {
 public:
  Mapping(int fd, uint64_t offset, uint64_t length, int protection) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    skew_ = offset % page;
    size_ = skew_ + length;
    base_ = ::mmap(nullptr, size_, protection, MAP_SHARED, fd, static_cast<off_t>(offset - skew_));
  }
  ~Mapping() {
    if (ok()) ::munmap(base_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  bool ok() const { return base_ != MAP_FAILED; }
  char* data() const { return static_cast<char*>(base_) + skew_; }
  int Sync() const { return ::msync(base_, size_, MS_SYNC); }

 private:
  void* base_ = MAP_FAILED;
  size_t size_ = 0;
  size_t skew_ = 0;
};

// Every fd the exerciser keeps open on one file.
struct FileFds {
  base::UniqueFd first;
  base::UniqueFd second;
  base::UniqueFd append;  // O_APPEND
  base::UniqueFd direct;  // O_DIRECT, when direct transfers are exercised
};

class Runner {
 public:
  explicit Runner(const ExerciserOptions& options)
      : options_(options), model_(options.files), kinds_(options.kinds) {}

  ExerciserReport Run();

 private:
  std::string PathOf(int file) const { return options_.directory + "/" + ExerciserFileName(file); }
  int FdOf(const Op& op) const {
    const FileFds& fds = fds_[op.file];
    return op.fd == Fd::kFirst ? fds.first.get() : fds.second.get();
  }

  Outcome CreateFiles();
  void SkipWhatTheDirectoryRefuses();
  void Skip(OpKinds kinds, const Failure& refusal);
  Outcome OpenFile(int file);
  void Log(int step, std::string_view what);
  ExerciserReport Fail(int step, const Failure& failure);

  Outcome Execute(const Op& op);
  Outcome Write(const Op& op);
  Outcome Append(const Op& op);
  Outcome Truncate(const Op& op);
  Outcome Read(const Op& op);
  Outcome ReadAll(const Op& op);
  Outcome MmapWrite(const Op& op);
  Outcome MmapRead(const Op& op);
  Outcome DirectWrite(const Op& op);
  Outcome DirectRead(const Op& op);
  Outcome Reopen(const Op& op);
  Outcome CheckSize(int file, int fd);
  Outcome CheckWholeFiles();

  const ExerciserOptions& options_;
  Model model_;
  OpKinds kinds_;
  std::vector<FileFds> fds_;
  std::deque<std::string> log_;
  ExerciserReport report_;
};

ExerciserReport Runner::Run() {
  if (Outcome failure = CreateFiles()) return Fail(-1, *failure);
  OpGenerator generator(options_.seed, kinds_, options_.max_file_size);
  for (int step = 0; step < options_.operations; ++step) {
    const Op op = generator.Next(model_);
    Log(step, Describe(op));
    if (Outcome failure = Execute(op)) return Fail(step, *failure);
    if (options_.after_step) options_.after_step(step);
  }
  // Closed first, so that the comparison sees what a later open sees, with nothing held back.
  fds_.clear();
  Log(options_.operations, "compare whole files");
  if (Outcome failure = CheckWholeFiles()) return Fail(options_.operations, *failure);
  return std::move(report_);
}

Outcome Runner::CreateFiles() {
  for (int file = 0; file < options_.files; ++file) {
    base::UniqueFd created;
    if (Outcome failure = Open(PathOf(file), O_RDWR | O_CREAT | O_TRUNC, created)) return failure;
  }
  SkipWhatTheDirectoryRefuses();
  fds_.resize(options_.files);
  for (int file = 0; file < options_.files; ++file) {
    if (Outcome failure = OpenFile(file)) return failure;
  }
  return std::nullopt;
}

// Not every filesystem takes O_DIRECT, and a FUSE file opened with direct_io cannot be mapped
// shared unless the server allows it: those kinds are skipped and reported, not failed.
void Runner::SkipWhatTheDirectoryRefuses() {
  base::UniqueFd fd;
  if ((kinds_ & kDirectKinds).any()) {
    if (Outcome refused = Open(PathOf(0), O_RDWR | O_DIRECT, fd)) Skip(kDirectKinds, *refused);
  }
  if ((kinds_ & kMappingKinds).any() && !Open(PathOf(0), O_RDWR, fd)) {
    const Mapping mapping(fd.get(), 0, 1, PROT_READ | PROT_WRITE);
    if (!mapping.ok()) Skip(kMappingKinds, ErrnoFailure("mmap(MAP_SHARED)"));
  }
}

void Runner::Skip(OpKinds kinds, const Failure& refusal) {
  report_.skipped.push_back(absl::StrFormat("%s: %s", Names(kinds), refusal.what));
  report_.refused |= kinds;
  kinds_ &= ~kinds;
}

Outcome Runner::OpenFile(int file) {
  const std::string path = PathOf(file);
  FileFds& fds = fds_[file];
  Outcome failure = Open(path, O_RDWR, fds.first);
  if (!failure) failure = Open(path, O_RDWR, fds.second);
  if (!failure) failure = Open(path, O_WRONLY | O_APPEND, fds.append);
  if (!failure && (kinds_ & kDirectKinds).any()) {
    failure = Open(path, O_RDWR | O_DIRECT, fds.direct);
  }
  return failure;
}

void Runner::Log(int step, std::string_view what) {
  if (log_.size() == kLogLength) log_.pop_front();
  log_.push_back(absl::StrFormat("#%d %s", step, what));
}

ExerciserReport Runner::Fail(int step, const Failure& failure) {
  report_.failed_step = step;
  report_.difference = failure.difference;
  std::string& text = report_.failure;
  text =
      absl::StrFormat("integrity check failed in %s: seed %d, step %d of %d\n  %s\n",
                      options_.directory, options_.seed, step, options_.operations, failure.what);
  if (failure.difference) {
    absl::StrAppendFormat(&text, "  expected %s\n  actual   %s\n",
                          failure.difference->expected_context, failure.difference->actual_context);
  }
  text += "the last operations, oldest first:\n";
  for (const std::string& line : log_) absl::StrAppend(&text, "  ", line, "\n");
  absl::StrAppendFormat(&text,
                        "replay with: seed=%d operations=%d files=%d max_file_size=%d "
                        "kinds=%s\n",
                        options_.seed, options_.operations, options_.files, options_.max_file_size,
                        Names(kinds_));
  return std::move(report_);
}

Outcome Runner::Execute(const Op& op) {
  switch (op.kind) {
    case OpKind::kWrite: return Write(op);
    case OpKind::kAppend: return Append(op);
    case OpKind::kTruncate: return Truncate(op);
    case OpKind::kRead: return Read(op);
    case OpKind::kReadAll: return ReadAll(op);
    case OpKind::kMmapWrite: return MmapWrite(op);
    case OpKind::kMmapRead: return MmapRead(op);
    case OpKind::kDirectWrite: return DirectWrite(op);
    case OpKind::kDirectRead: return DirectRead(op);
    case OpKind::kFsync:
      if (::fsync(FdOf(op)) != 0) return ErrnoFailure("fsync");
      return std::nullopt;
    case OpKind::kReopen: return Reopen(op);
    case OpKind::kStat: return CheckSize(op.file, FdOf(op));
  }
  return Failure{"unknown operation kind", std::nullopt};
}

// Each change is followed by fstat through the first fd, also when it went through another, so
// that a size one fd's change left stale is caught.
Outcome Runner::Write(const Op& op) {
  const std::string data = DataOf(op);
  const ssize_t written =
      ::pwrite(FdOf(op), data.data(), data.size(), static_cast<off_t>(op.offset));
  if (Outcome failure = CheckWritten(written, data.size(), "pwrite")) return failure;
  model_.Write(op.file, op.offset, data);
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::Append(const Op& op) {
  const std::string data = DataOf(op);
  const ssize_t written = ::write(fds_[op.file].append.get(), data.data(), data.size());
  if (Outcome failure = CheckWritten(written, data.size(), "write(O_APPEND)")) return failure;
  model_.Append(op.file, data);
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::Truncate(const Op& op) {
  if (::ftruncate(FdOf(op), static_cast<off_t>(op.length)) != 0) {
    return ErrnoFailure("ftruncate");
  }
  model_.Truncate(op.file, op.length);
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::Read(const Op& op) {
  std::string data(op.length, '\0');
  const ssize_t length = ::pread(FdOf(op), data.data(), data.size(), static_cast<off_t>(op.offset));
  if (length < 0) return ErrnoFailure("pread");
  data.resize(static_cast<size_t>(length));
  return Compare("pread", model_.Expected(op.file, op.offset, op.length), data, op.offset);
}

Outcome Runner::ReadAll(const Op& op) {
  std::string data;
  if (Outcome failure = ReadWhole(FdOf(op), data)) return failure;
  return Compare("read-all", model_.Contents(op.file), data, 0);
}

Outcome Runner::MmapWrite(const Op& op) {
  const Mapping mapping(FdOf(op), op.offset, op.length, PROT_READ | PROT_WRITE);
  if (!mapping.ok()) return ErrnoFailure("mmap");
  const std::string data = DataOf(op);
  std::memcpy(mapping.data(), data.data(), data.size());
  if (mapping.Sync() != 0) return ErrnoFailure("msync");
  model_.Write(op.file, op.offset, data);
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::MmapRead(const Op& op) {
  const Mapping mapping(FdOf(op), op.offset, op.length, PROT_READ);
  if (!mapping.ok()) return ErrnoFailure("mmap");
  return Compare("mmap-read", model_.Expected(op.file, op.offset, op.length),
                 std::string_view(mapping.data(), op.length), op.offset);
}

Outcome Runner::DirectWrite(const Op& op) {
  const std::string data = DataOf(op);
  const AlignedBuffer buffer = MakeAlignedBuffer(data.size());
  std::memcpy(buffer.get(), data.data(), data.size());
  const ssize_t written = ::pwrite(fds_[op.file].direct.get(), buffer.get(), data.size(),
                                   static_cast<off_t>(op.offset));
  if (Outcome failure = CheckWritten(written, data.size(), "pwrite(O_DIRECT)")) return failure;
  model_.Write(op.file, op.offset, data);
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::DirectRead(const Op& op) {
  const AlignedBuffer buffer = MakeAlignedBuffer(op.length);
  const ssize_t length =
      ::pread(fds_[op.file].direct.get(), buffer.get(), op.length, static_cast<off_t>(op.offset));
  if (length < 0) return ErrnoFailure("pread(O_DIRECT)");
  return Compare("pread(O_DIRECT)", model_.Expected(op.file, op.offset, op.length),
                 std::string_view(buffer.get(), static_cast<size_t>(length)), op.offset);
}

Outcome Runner::Reopen(const Op& op) {
  fds_[op.file] = FileFds{};
  if (Outcome failure = OpenFile(op.file)) return failure;
  return CheckSize(op.file, fds_[op.file].first.get());
}

Outcome Runner::CheckSize(int file, int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoFailure("fstat");
  if (static_cast<uint64_t>(st.st_size) == model_.Size(file)) return std::nullopt;
  return Failure{absl::StrFormat("fstat of file-%d: size %d, expected %d", file, st.st_size,
                                 model_.Size(file)),
                 std::nullopt};
}

Outcome Runner::CheckWholeFiles() {
  for (int file = 0; file < options_.files; ++file) {
    base::UniqueFd fd;
    std::string data;
    Outcome failure = Open(PathOf(file), O_RDONLY, fd);
    if (!failure) failure = ReadWhole(fd.get(), data);
    if (!failure) {
      failure = Compare(ExerciserFileName(file) + " as a whole", model_.Contents(file), data, 0);
    }
    if (failure) return failure;
  }
  return std::nullopt;
}

}  // namespace

ExerciserReport RunExerciser(const ExerciserOptions& options) { return Runner(options).Run(); }

std::string ExerciserFileName(int file) { return absl::StrFormat("file-%d", file); }

}  // namespace ringfuse::integrity
