// LiveFs: a small read-only tree whose content changes from outside the request path (main.cc
// changes it on commands), which the kernel may cache for a day: only a notification makes it
// see a change. The tree:
//   counter           a number, see Bump
//   message           a line of text, see Say
//   note              an empty file whose name changes, see RenameNote
//   snapshot/version  "generation N", a new inode for each N, see Publish
// Each change returns what main.cc must tell the kernel; LiveFs itself sends nothing.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "ringfuse/ringfuse.h"

namespace ringfuse::examples {

class LiveFs : public Handler {
 public:
  static constexpr uint64_t kCounter = 2;
  static constexpr uint64_t kMessage = 3;
  static constexpr uint64_t kNote = 4;
  static constexpr uint64_t kSnapshot = 5;

  // The changes; thread-safe. Each returns what the kernel must be told.
  // The counter's new bytes: same length or longer, so STORE can replace the cached ones.
  std::string Bump();
  // The message may shrink, which STORE cannot express: its pages and size must go.
  void Say(std::string_view text);
  // The old name, for its cached entry to go; InvalidArgument for a name that cannot be used.
  absl::StatusOr<std::string> RenameNote(std::string_view new_name);
  // Every name under snapshot/ now leads to new inodes.
  void Publish();

  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override;
  void Getattr(const RequestContext& context, const op::Getattr& args, AttrReply reply) override;
  void Open(const RequestContext& context, const op::Open& args, OpenReply reply) override;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override;
  void Opendir(const RequestContext& context, const op::Opendir& args, OpenReply reply) override;
  void Readdir(const RequestContext& context, const op::Readdir& args, DirReply reply) override;

 private:
  struct Node {
    uint32_t mode = 0;
    std::string content;  // regular files
  };
  struct Child {
    std::string name;
    uint64_t nodeid;
    uint32_t dirent_type;
  };

  std::optional<Node> NodeOf(uint64_t nodeid) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Child> ChildrenOf(uint64_t nodeid) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t VersionNode() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable std::mutex mu_;
  uint64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::string message_ ABSL_GUARDED_BY(mu_) = "hello\n";
  std::string note_name_ ABSL_GUARDED_BY(mu_) = "note";
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ringfuse::examples
