#include "tools/stress_tree.h"

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"

namespace ringfuse::tools {
namespace {

constexpr size_t kSmallestFile = 8;

char ByteAt(int index, size_t offset) {
  return static_cast<char>('a' + (static_cast<size_t>(index) * 7 + offset) % 26);
}

absl::Status WriteFile(const std::string& path, int index) {
  std::string contents(StressTree::FileSize(index), '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = ByteAt(index, i);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << contents;
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StressTree> StressTree::Create(const std::string& parent, int files) {
  std::string name = parent + "/ringfuse-stress-XXXXXX";
  if (::mkdtemp(name.data()) == nullptr) {
    return base::ErrnoStatus(errno, "a temporary directory in " + parent);
  }
  StressTree tree(name, files);  // removes what was made if a step below fails
  std::error_code error;
  if (!std::filesystem::create_directory(name + "/" + kDir, error)) {
    return absl::InternalError(absl::StrCat(name, "/", kDir, ": ", error.message()));
  }
  for (int i = 0; i < files; ++i) {
    if (absl::Status written = WriteFile(absl::StrCat(name, "/", kDir, "/", FileName(i)), i);
        !written.ok()) {
      return written;
    }
  }
  return tree;
}

StressTree::~StressTree() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string StressTree::FileName(int index) { return absl::StrFormat("f%06d", index); }

// Sizes spread over the whole range by a multiplicative hash, so that neighbouring files differ.
size_t StressTree::FileSize(int index) {
  const uint32_t hash = static_cast<uint32_t>(index) * 2654435761u;
  return kSmallestFile + hash % (kLargestFile - kSmallestFile + 1);
}

bool StressTree::HoldsContents(int index, ConstBytes bytes) {
  if (bytes.size() != FileSize(index)) return false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (static_cast<char>(bytes[i]) != ByteAt(index, i)) return false;
  }
  return true;
}

}  // namespace ringfuse::tools
