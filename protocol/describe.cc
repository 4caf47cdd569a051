#include "protocol/describe.h"

#include <cstring>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ringfuse/init.h"

namespace ringfuse {
namespace {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Debian 12's Abseil has its own string_view type, distinct from std::string_view.
std::string Quoted(std::string_view text) {
  return absl::StrFormat("\"%s\"", absl::CEscape(absl::string_view(text.data(), text.size())));
}

// The arguments worth seeing on a debug line; fixed structs in full would drown the log.
std::string DescribeArgs(const RequestArgs& args) {
  return std::visit(
      Overloaded{
          [](const op::Lookup& a) { return "name=" + Quoted(a.name); },
          [](const op::Unlink& a) { return "name=" + Quoted(a.name); },
          [](const op::Rmdir& a) { return "name=" + Quoted(a.name); },
          [](const op::Removexattr& a) { return "name=" + Quoted(a.name); },
          [](const op::Forget& a) { return absl::StrFormat("nlookup=%u", a.in.nlookup); },
          [](const op::Symlink& a) {
            return absl::StrFormat("name=%s target=%s", Quoted(a.name), Quoted(a.target));
          },
          [](const op::Mknod& a) {
            return absl::StrFormat("name=%s mode=0%o rdev=%u umask=0%o", Quoted(a.name), a.in.mode,
                                   a.in.rdev, a.in.umask);
          },
          [](const op::Mkdir& a) {
            return absl::StrFormat("name=%s mode=0%o umask=0%o", Quoted(a.name), a.in.mode,
                                   a.in.umask);
          },
          [](const op::Create& a) {
            return absl::StrFormat("name=%s flags=0x%x mode=0%o", Quoted(a.name), a.in.flags,
                                   a.in.mode);
          },
          [](const op::Tmpfile& a) {
            return absl::StrFormat("flags=0x%x mode=0%o", a.in.flags, a.in.mode);
          },
          [](const op::Rename& a) {
            return absl::StrFormat("old=%s newdir=%u new=%s flags=0x%x", Quoted(a.old_name),
                                   a.newdir, Quoted(a.new_name), a.flags);
          },
          [](const op::Link& a) {
            return absl::StrFormat("oldnodeid=%u new=%s", a.in.oldnodeid, Quoted(a.new_name));
          },
          [](const op::Setattr& a) {
            return absl::StrFormat("valid=0x%x mode=0%o size=%u", a.in.valid, a.in.mode, a.in.size);
          },
          [](const op::Open& a) { return absl::StrFormat("flags=0x%x", a.in.flags); },
          [](const op::Opendir& a) { return absl::StrFormat("flags=0x%x", a.in.flags); },
          [](const op::Read& a) {
            return absl::StrFormat("fh=%u offset=%u size=%u", a.in.fh, a.in.offset, a.in.size);
          },
          [](const op::Readdir& a) {
            return absl::StrFormat("fh=%u offset=%u size=%u", a.in.fh, a.in.offset, a.in.size);
          },
          [](const op::Readdirplus& a) {
            return absl::StrFormat("fh=%u offset=%u size=%u", a.in.fh, a.in.offset, a.in.size);
          },
          [](const op::Write& a) {
            return absl::StrFormat("fh=%u offset=%u size=%u", a.in.fh, a.in.offset, a.in.size);
          },
          [](const op::Release& a) { return absl::StrFormat("fh=%u", a.in.fh); },
          [](const op::Releasedir& a) { return absl::StrFormat("fh=%u", a.in.fh); },
          [](const op::Flush& a) { return absl::StrFormat("fh=%u", a.in.fh); },
          [](const op::Setxattr& a) {
            return absl::StrFormat("name=%s size=%u", Quoted(a.name), a.value.size());
          },
          [](const op::Getxattr& a) {
            return absl::StrFormat("name=%s size=%u", Quoted(a.name), a.in.size);
          },
          [](const op::Init& a) {
            return absl::StrFormat("version=%u.%u flags=%s", a.in.major, a.in.minor,
                                   InitFlagNames(a.in.flags | (uint64_t{a.in.flags2} << 32)));
          },
          [](const op::Interrupt& a) { return absl::StrFormat("target=%u", a.in.unique); },
          [](const op::BatchForget& a) { return absl::StrFormat("count=%u", a.forgets.size()); },
          [](const op::Access& a) { return absl::StrFormat("mask=0%o", a.in.mask); },
          [](const op::Lseek& a) {
            return absl::StrFormat("fh=%u offset=%u whence=%u", a.in.fh, a.in.offset, a.in.whence);
          },
          [](const op::CopyFileRange& a) {
            return absl::StrFormat("fh_in=%u off_in=%u nodeid_out=%u off_out=%u len=%u", a.in.fh_in,
                                   a.in.off_in, a.in.nodeid_out, a.in.off_out, a.in.len);
          },
          [](const auto&) { return std::string(); },
      },
      args);
}

}  // namespace

std::string DescribeRequest(const Request& request) {
  const wire::InHeader& h = request.header;
  std::string line = absl::StrFormat("%s unique=%u nodeid=%u uid=%u gid=%u pid=%u",
                                     OpcodeName(h.opcode), h.unique, h.nodeid, h.uid, h.gid, h.pid);
  const std::string args = DescribeArgs(request.args);
  if (!args.empty()) absl::StrAppend(&line, " ", args);
  return line;
}

std::string DescribeReply(uint64_t unique, int32_t error, size_t body_size) {
  if (error == 0) return absl::StrFormat("reply unique=%u ok (%u bytes)", unique, body_size);
  const char* name = strerrorname_np(-error);
  return absl::StrFormat("reply unique=%u error=-%s", unique, name ? name : "?");
}

}  // namespace ringfuse
