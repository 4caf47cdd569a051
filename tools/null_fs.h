// A filesystem that costs nothing: a root directory holding one 4 KiB file, answered from
// constants with zero cache timeouts, so that every stat() of the file is a LOOKUP and a GETATTR
// round trip. What the latency tool measures is the transport, not a filesystem.
#pragma once

#include <sys/stat.h>

#include <cstring>

#include "ringfuse/handler.h"

namespace ringfuse::tools {

class NullFs : public Handler {
 public:
  static constexpr uint64_t kFileNode = 2;
  static constexpr const char* kFileName = "file";
  static constexpr uint64_t kFileSize = 4096;

  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    if (args.name != kFileName) return reply.Error(ENOENT);
    reply.Ok(MakeEntry(kFileNode, 1, FileAttr(), Timeout{}, Timeout{}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    reply.Ok(MakeAttrOut(context.nodeid() == kFileNode ? FileAttr() : RootAttr(), Timeout{}));
  }
  void Open(const RequestContext&, const op::Open&, OpenReply reply) override {
    reply.Ok(MakeOpenOut(1, wire::kFopenDirectIo));
  }
  void Read(const RequestContext&, const op::Read& args, DataReply reply) override {
    static const std::byte kZeros[kFileSize] = {};
    const uint64_t start = std::min<uint64_t>(args.offset(), kFileSize);
    const uint64_t end = std::min<uint64_t>(start + args.size(), kFileSize);
    reply.Ok(ConstBytes(kZeros + start, end - start));
  }
  void Release(const RequestContext&, const op::Release&, EmptyReply reply) override { reply.Ok(); }
  void Opendir(const RequestContext&, const op::Opendir&, OpenReply reply) override {
    reply.Ok(MakeOpenOut(1, 0));
  }
  void Releasedir(const RequestContext&, const op::Releasedir&, EmptyReply reply) override {
    reply.Ok();
  }

 private:
  static wire::Attr RootAttr() {
    wire::Attr attr{};
    attr.ino = wire::kRootId;
    attr.mode = S_IFDIR | 0755;
    attr.nlink = 2;
    return attr;
  }
  static wire::Attr FileAttr() {
    wire::Attr attr{};
    attr.ino = kFileNode;
    attr.mode = S_IFREG | 0644;
    attr.nlink = 1;
    attr.size = kFileSize;
    attr.blocks = kFileSize / 512;
    attr.blksize = 4096;
    return attr;
  }
};

}  // namespace ringfuse::tools
