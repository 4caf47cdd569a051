#include "protocol/describe.h"

#include <cstring>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ringfuse/init.h"

namespace ringfuse::internal {
namespace {

// Which fields each opcode shows: the one list, for every reader of requests.
struct FieldLister {
  FieldVisitor& out;

  void Dec(std::string_view name, uint64_t value) { out.Number(name, value, FieldBase::kDecimal); }
  void Hex(std::string_view name, uint64_t value) { out.Number(name, value, FieldBase::kHex); }
  void Oct(std::string_view name, uint64_t value) { out.Number(name, value, FieldBase::kOctal); }
  void Name(std::string_view name, std::string_view value) { out.Bytes(name, value); }
  void Range(uint64_t fh, uint64_t offset, uint64_t size) {
    Dec("fh", fh);
    Dec("offset", offset);
    Dec("size", size);
  }
  void Lock(const wire::LkIn& in) {
    Dec("fh", in.fh);
    Hex("owner", in.owner);
    Dec("start", in.lk.start);
    Dec("end", in.lk.end);
    Dec("type", in.lk.type);
    Dec("lk_pid", in.lk.pid);  // the lock holder's, not the caller's: "pid" is the header's
  }

  void operator()(const op::Lookup& a) { Name("name", a.name); }
  void operator()(const op::Unlink& a) { Name("name", a.name); }
  void operator()(const op::Rmdir& a) { Name("name", a.name); }
  void operator()(const op::Removexattr& a) { Name("name", a.name); }
  void operator()(const op::Forget& a) { Dec("nlookup", a.in.nlookup); }
  void operator()(const op::Getattr& a) {
    Hex("getattr_flags", a.in.getattr_flags);
    Dec("fh", a.in.fh);
  }
  void operator()(const op::Symlink& a) {
    Name("name", a.name);
    Name("target", a.target);
  }
  void operator()(const op::Mknod& a) {
    Name("name", a.name);
    Oct("mode", a.in.mode);
    Dec("rdev", a.in.rdev);
    Oct("umask", a.in.umask);
  }
  void operator()(const op::Mkdir& a) {
    Name("name", a.name);
    Oct("mode", a.in.mode);
    Oct("umask", a.in.umask);
  }
  void operator()(const op::Create& a) {
    Name("name", a.name);
    Hex("flags", a.in.flags);
    Oct("mode", a.in.mode);
  }
  void operator()(const op::Tmpfile& a) {
    Hex("flags", a.in.flags);
    Oct("mode", a.in.mode);
  }
  void operator()(const op::Rename& a) {
    Name("old", a.old_name);
    Dec("newdir", a.newdir());
    Name("new", a.new_name);
    Hex("flags", a.flags());
  }
  void operator()(const op::Link& a) {
    Dec("oldnodeid", a.in.oldnodeid);
    Name("new", a.new_name);
  }
  void operator()(const op::Setattr& a) {
    Hex("valid", a.in.valid);
    Oct("mode", a.in.mode);
    Dec("size", a.in.size);
  }
  void operator()(const op::Open& a) { Hex("flags", a.in.flags); }
  void operator()(const op::Opendir& a) { Hex("flags", a.in.flags); }
  void operator()(const op::Read& a) { Range(a.in.fh, a.in.offset, a.in.size); }
  void operator()(const op::Readdir& a) { Range(a.in.fh, a.in.offset, a.in.size); }
  void operator()(const op::Readdirplus& a) { Range(a.in.fh, a.in.offset, a.in.size); }
  void operator()(const op::Write& a) { Range(a.in.fh, a.in.offset, a.in.size); }
  void operator()(const op::Release& a) { Dec("fh", a.in.fh); }
  void operator()(const op::Releasedir& a) { Dec("fh", a.in.fh); }
  void operator()(const op::Flush& a) { Dec("fh", a.in.fh); }
  void operator()(const op::Fsync& a) {
    Dec("fh", a.in.fh);
    Hex("fsync_flags", a.in.fsync_flags);
  }
  void operator()(const op::Fsyncdir& a) {
    Dec("fh", a.in.fh);
    Hex("fsync_flags", a.in.fsync_flags);
  }
  void operator()(const op::Setxattr& a) {
    Name("name", a.name);
    Dec("size", a.value.size());
  }
  void operator()(const op::Getxattr& a) {
    Name("name", a.name);
    Dec("size", a.in.size);
  }
  void operator()(const op::Listxattr& a) { Dec("size", a.in.size); }
  void operator()(const op::Getlk& a) { Lock(a.in); }
  void operator()(const op::Setlk& a) {
    Lock(a.in);
    Dec("wait", a.wait);
  }
  void operator()(const op::Init& a) {
    Dec("major", a.in.major);
    Dec("minor", a.in.minor);
    out.Text("flags", InitFlagNames(a.in.flags | (uint64_t{a.in.flags2} << 32)));
  }
  void operator()(const op::Interrupt& a) { Dec("target", a.in.unique); }
  void operator()(const op::BatchForget& a) { Dec("count", a.forgets.size()); }
  void operator()(const op::Access& a) { Oct("mask", a.in.mask); }
  void operator()(const op::Lseek& a) {
    Dec("fh", a.in.fh);
    Dec("offset", a.in.offset);
    Dec("whence", a.in.whence);
  }
  void operator()(const op::CopyFileRange& a) {
    Dec("fh_in", a.in.fh_in);
    Dec("off_in", a.in.off_in);
    Dec("nodeid_out", a.in.nodeid_out);
    Dec("off_out", a.in.off_out);
    Dec("len", a.in.len);
  }
  void operator()(const op::Fallocate& a) {
    Dec("fh", a.in.fh);
    Dec("offset", a.in.offset);
    Dec("length", a.in.length);
    Hex("mode", a.in.mode);
  }
  void operator()(const op::Statx& a) {
    Dec("fh", a.in.fh);
    Hex("sx_flags", a.in.sx_flags);
    Hex("sx_mask", a.in.sx_mask);
  }
  void operator()(const op::Ioctl& a) {
    Dec("fh", a.in.fh);
    Hex("cmd", a.in.cmd);
    Dec("in_size", a.in.in_size);
    Dec("out_size", a.in.out_size);
  }
  void operator()(const op::Poll& a) {
    Dec("fh", a.in.fh);
    Hex("events", a.in.events);
  }
  void operator()(const op::Bmap& a) {
    Dec("block", a.in.block);
    Dec("blocksize", a.in.blocksize);
  }
  void operator()(const auto&) {}
};

// The -d form: name=value, numbers in their base, wire bytes quoted and C-escaped.
class LineFields : public FieldVisitor {
 public:
  explicit LineFields(std::string& line) : line_(line) {}

  void Number(std::string_view name, uint64_t value, FieldBase base) override {
    switch (base) {
      case FieldBase::kDecimal: absl::StrAppendFormat(&line_, " %s=%u", name, value); break;
      case FieldBase::kHex: absl::StrAppendFormat(&line_, " %s=0x%x", name, value); break;
      case FieldBase::kOctal: absl::StrAppendFormat(&line_, " %s=0%o", name, value); break;
    }
  }
  void Bytes(std::string_view name, std::string_view value) override {
    // Debian 12's Abseil has its own string_view type, distinct from std::string_view.
    absl::StrAppendFormat(&line_, " %s=\"%s\"", name,
                          absl::CEscape(absl::string_view(value.data(), value.size())));
  }
  void Text(std::string_view name, std::string_view value) override {
    absl::StrAppendFormat(&line_, " %s=%s", name, value);
  }

 private:
  std::string& line_;
};

}  // namespace

void VisitRequestFields(const RequestArgs& args, FieldVisitor& visitor) {
  std::visit(FieldLister{visitor}, args);
}

}  // namespace ringfuse::internal

namespace ringfuse {

std::string DescribeRequest(const Request& request) {
  const wire::InHeader& h = request.header;
  std::string line = absl::StrFormat("%s unique=%u nodeid=%u uid=%u gid=%u pid=%u",
                                     OpcodeName(h.opcode), h.unique, h.nodeid, h.uid, h.gid, h.pid);
  internal::LineFields fields(line);
  internal::VisitRequestFields(request.args, fields);
  return line;
}

std::string DescribeReply(uint64_t unique, int32_t error, size_t body_size) {
  if (error == 0) return absl::StrFormat("reply unique=%u ok (%u bytes)", unique, body_size);
  const char* name = strerrorname_np(-error);
  return absl::StrFormat("reply unique=%u error=-%s", unique, name ? name : "?");
}

}  // namespace ringfuse
