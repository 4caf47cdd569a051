// What an open directory's fh points to: the backing directory stream it is listed from.
#pragma once

#include <dirent.h>

namespace ringfuse::daemon {

struct DirHandle {
  explicit DirHandle(DIR* stream) : dir(stream) {}
  ~DirHandle() { ::closedir(dir); }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;

  DIR* const dir;
};

}  // namespace ringfuse::daemon
