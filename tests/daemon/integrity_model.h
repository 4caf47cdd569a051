// The integrity exerciser's model: what each file must hold after the operations so far, as if
// nothing were ever cached, reordered or lost. Every read and every size is checked against it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringfuse::integrity {

class Model {
 public:
  explicit Model(int files) : contents_(files) {}

  int files() const { return static_cast<int>(contents_.size()); }
  const std::string& Contents(int file) const { return contents_[file]; }
  uint64_t Size(int file) const { return contents_[file].size(); }

  // A write past the end leaves a hole, which reads back as zeros.
  void Write(int file, uint64_t offset, std::string_view data);
  void Append(int file, std::string_view data) { contents_[file].append(data); }
  void Truncate(int file, uint64_t size) { contents_[file].resize(size, '\0'); }

  // What a read of `length` bytes at `offset` must return: cut at the end of the file.
  std::string_view Expected(int file, uint64_t offset, uint64_t length) const;

 private:
  std::vector<std::string> contents_;
};

// Where a read first disagrees with the model. A byte value of -1 means the data ended there.
struct Difference {
  uint64_t offset = 0;  // in the file
  int expected = -1;
  int actual = -1;
  std::string expected_context;  // hex bytes around the offset, to tell a shift from a flip
  std::string actual_context;
};

// Compares `actual`, read at file offset `base`, with `expected`, length included.
std::optional<Difference> FirstDifference(std::string_view expected, std::string_view actual,
                                          uint64_t base);

}  // namespace ringfuse::integrity
