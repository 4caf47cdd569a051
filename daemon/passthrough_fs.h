// The passthrough filesystem: SOURCE served through the mount. This first slice serves the
// read-only core (lookup, forget, getattr, readlink, open, read, release, statfs, and listing
// directories with readdir and readdirplus); the rest of the operation set follows.
#pragma once

#include <cstdint>

#include "daemon/inode_table.h"
#include "daemon/options.h"
#include "protocol/handler.h"

namespace ringfuse::daemon {

class PassthroughFs : public Handler {
 public:
  // `root` is an O_PATH fd to SOURCE.
  PassthroughFs(UniqueFd root, const DaemonOptions& options);

  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override;
  void Forget(const RequestContext& context, const op::Forget& args) override;
  void BatchForget(const RequestContext& context, const op::BatchForget& args) override;
  void Getattr(const RequestContext& context, const op::Getattr& args, AttrReply reply) override;
  void Readlink(const RequestContext& context, const op::Readlink& args, DataReply reply) override;
  void Open(const RequestContext& context, const op::Open& args, OpenReply reply) override;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override;
  void Release(const RequestContext& context, const op::Release& args, EmptyReply reply) override;
  void Statfs(const RequestContext& context, const op::Statfs& args, StatfsReply reply) override;
  void Opendir(const RequestContext& context, const op::Opendir& args, OpenReply reply) override;
  void Readdir(const RequestContext& context, const op::Readdir& args, DataReply reply) override;
  void Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                   DataReply reply) override;
  void Releasedir(const RequestContext& context, const op::Releasedir& args,
                  EmptyReply reply) override;

  const InodeTable& inodes() const { return inodes_; }
  InodeTable& inodes() { return inodes_; }

 private:
  void List(uint64_t dir_node, uint64_t fh, uint64_t offset, uint32_t size, bool plus,
            DataReply reply);

  InodeTable inodes_;
  const DaemonOptions options_;
};

}  // namespace ringfuse::daemon
