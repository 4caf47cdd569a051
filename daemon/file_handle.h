// What an open regular file's fh points to: the backing fd and its kernel passthrough id.
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

  static FileHandle& Of(uint64_t fh) { return *reinterpret_cast<FileHandle*>(fh); }
  uint64_t fh() { return reinterpret_cast<uint64_t>(this); }

  int fd() const { return fd_.get(); }
  int flags() const { return flags_; }  // the backing open's flags
  dev_t dev() const { return dev_; }
  ino_t ino() const { return ino_; }
  int32_t backing_id() const { return backing_id_; }
  void set_backing_id(int32_t id) { backing_id_ = id; }

 private:
  const UniqueFd fd_;
  const int flags_;
  dev_t dev_;
  ino_t ino_;
  int32_t backing_id_ = 0;
};

}  // namespace ringfuse::daemon
