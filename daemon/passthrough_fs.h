// The passthrough filesystem: SOURCE served through the mount. This first slice serves the
// read-only core (lookup, forget, getattr, readlink, open, read, release, statfs); the rest of
// the operation set follows.
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

  const InodeTable& inodes() const { return inodes_; }

 private:
  InodeTable inodes_;
  const DaemonOptions options_;
};

}  // namespace ringfuse::daemon
