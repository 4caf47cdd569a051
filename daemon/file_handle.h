// What an open regular file's fh points to: the backing fd, and whether the kernel reads and
// writes it through passthrough (the inode's shared backing id, see backing_ids.h).
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "transport/fd.h"

namespace ringfuse::daemon {

class FileHandle {
 public:
  FileHandle(UniqueFd fd, int flags) : fd_(std::move(fd)), flags_(flags) {
    struct stat st {};
    ::fstat(fd_.get(), &st);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }

  int fd() const { return fd_.get(); }
  int flags() const { return flags_; }  // the backing open's flags
  dev_t dev() const { return dev_; }
  ino_t ino() const { return ino_; }
  bool passthrough() const { return passthrough_; }
  void set_passthrough() { passthrough_ = true; }

 private:
  const UniqueFd fd_;
  const int flags_;
  dev_t dev_;
  ino_t ino_;
  bool passthrough_ = false;
};

}  // namespace ringfuse::daemon
