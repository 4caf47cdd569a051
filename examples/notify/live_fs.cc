#include "live_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

namespace ringfuse::examples {
namespace {

// Names, attributes, missing names and pages are all cached this long: a change reaches the
// kernel by notification or not at all.
constexpr Timeout kDay{24 * 60 * 60};
// snapshot/version of generation N is node kVersionBase + N. Generations never change, so the
// kernel may keep a version's pages forever; only the name must lead to the newest one.
constexpr uint64_t kVersionBase = 100;
constexpr size_t kNameMax = 255;

wire::Attr AttrOf(uint64_t nodeid, uint32_t mode, uint64_t size) {
  wire::Attr attr{};
  attr.ino = nodeid;
  attr.mode = mode;
  attr.nlink = S_ISDIR(mode) ? 2 : 1;
  attr.size = size;
  return attr;
}

}  // namespace

std::string LiveFs::Bump() {
  std::lock_guard lock(mu_);
  ++counter_;
  return NodeOf(kCounter)->content;
}

void LiveFs::Say(std::string_view text) {
  std::lock_guard lock(mu_);
  message_ = std::string(text) + "\n";
}

absl::StatusOr<std::string> LiveFs::RenameNote(std::string_view new_name) {
  if (new_name.empty() || new_name.size() > kNameMax || new_name == "." || new_name == ".." ||
      new_name.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos) {
    return absl::InvalidArgumentError("'" + std::string(new_name) + "' is not a file name");
  }
  std::lock_guard lock(mu_);
  for (const Child& child : ChildrenOf(wire::kRootId)) {
    if (child.name == new_name) {
      return absl::InvalidArgumentError("'" + std::string(new_name) + "' is taken");
    }
  }
  return std::exchange(note_name_, std::string(new_name));
}

void LiveFs::Publish() {
  std::lock_guard lock(mu_);
  ++generation_;
}

std::optional<LiveFs::Node> LiveFs::NodeOf(uint64_t nodeid) const {
  switch (nodeid) {
    case wire::kRootId:
    case kSnapshot: return Node{.mode = S_IFDIR | 0555, .content = ""};
    case kCounter: return Node{.mode = S_IFREG | 0444, .content = std::to_string(counter_) + "\n"};
    case kMessage: return Node{.mode = S_IFREG | 0444, .content = message_};
    case kNote: return Node{.mode = S_IFREG | 0444, .content = ""};
  }
  if (nodeid > kVersionBase && nodeid <= VersionNode()) {
    return Node{.mode = S_IFREG | 0444,
                .content = "generation " + std::to_string(nodeid - kVersionBase) + "\n"};
  }
  return std::nullopt;
}

// In readdir order, "." and ".." first.
std::vector<LiveFs::Child> LiveFs::ChildrenOf(uint64_t nodeid) const {
  if (nodeid == wire::kRootId) {
    return {{".", wire::kRootId, DT_DIR},  {"..", wire::kRootId, DT_DIR},
            {"counter", kCounter, DT_REG}, {"message", kMessage, DT_REG},
            {note_name_, kNote, DT_REG},   {"snapshot", kSnapshot, DT_DIR}};
  }
  if (nodeid == kSnapshot) {
    return {{".", kSnapshot, DT_DIR},
            {"..", wire::kRootId, DT_DIR},
            {"version", VersionNode(), DT_REG}};
  }
  return {};
}

uint64_t LiveFs::VersionNode() const { return kVersionBase + generation_; }

void LiveFs::Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) {
  std::lock_guard lock(mu_);
  for (const Child& child : ChildrenOf(context.nodeid())) {
    if (child.name != args.name || child.name == "." || child.name == "..") continue;
    const Node node = *NodeOf(child.nodeid);
    const wire::Attr attr = AttrOf(child.nodeid, node.mode, node.content.size());
    return reply.Ok(MakeEntry(child.nodeid, 0, attr, kDay, kDay));
  }
  // Cached too: a name that appears later needs its absence invalidated (see RenameNote).
  reply.Ok(MakeNegativeEntry(kDay));
}

void LiveFs::Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) {
  std::lock_guard lock(mu_);
  const std::optional<Node> node = NodeOf(context.nodeid());
  if (!node) return reply.Error(ENOENT);
  reply.Ok(MakeAttrOut(AttrOf(context.nodeid(), node->mode, node->content.size()), kDay));
}

// KEEP_CACHE: the pages stay cached across opens, until a notification says otherwise.
void LiveFs::Open(const RequestContext&, const op::Open& args, OpenReply reply) {
  if ((args.flags() & O_ACCMODE) != O_RDONLY) return reply.Error(EACCES);
  reply.Ok(MakeOpenOut(0, wire::kFopenKeepCache));
}

void LiveFs::Read(const RequestContext& context, const op::Read& args, DataReply reply) {
  std::string content;
  {
    std::lock_guard lock(mu_);
    const std::optional<Node> node = NodeOf(context.nodeid());
    if (!node) return reply.Error(ENOENT);
    content = node->content;
  }
  const size_t offset = std::min<uint64_t>(args.offset(), content.size());
  reply.Ok(AsBytes(std::string_view(content).substr(offset, args.size())));
}

void LiveFs::Opendir(const RequestContext&, const op::Opendir&, OpenReply reply) {
  reply.Ok(MakeOpenOut(0, 0));
}

// Entries are numbered by their place in the listing; the kernel continues from offset().
void LiveFs::Readdir(const RequestContext& context, const op::Readdir&, DirReply reply) {
  std::vector<Child> children;
  {
    std::lock_guard lock(mu_);
    children = ChildrenOf(context.nodeid());
  }
  for (uint64_t position = reply.offset(); position < children.size(); ++position) {
    const Child& child = children[position];
    if (!reply.Add(child.name, child.nodeid, child.dirent_type)) break;
  }
  reply.Ok();
}

}  // namespace ringfuse::examples
