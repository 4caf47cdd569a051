// Room for fds when the daemon runs out of them.
//
// The inode table keeps most of the fd limit as open nodes, because a node beyond its budget
// costs a reopen on every lookup of a working set larger than the budget. What cannot give fds
// back (clients' open files and directories, lock owners' opens, passthrough's backing files)
// then finds the limit reached first: an open that fails with EMFILE asks the lenders (the
// table) to close some of what they keep and is made again.
//
// Retrying is safe for any open, O_CREAT|O_EXCL included: the kernel takes the fd before it
// resolves the name (fs/open.c do_sys_openat2: get_unused_fd_flags, then do_filp_open), so an
// EMFILE made nothing.
//
// Lenders are plain function pointers, not virtual objects: when no fd is free, UBSan's check of
// a virtual call's dynamic type (which probes memory through a pipe) would itself fail.
#pragma once

#include <cstddef>

#include "absl/functional/function_ref.h"
#include "base/errno.h"

namespace ringfuse::daemon {

// Closes up to `count` of the fds `lender` keeps; returns how many it let go of.
using FdLender = size_t (*)(void* lender, size_t count);

// Registers `lender` until StopLendingFds(lender); called only after an EMFILE, from any thread,
// with none of the caller's locks that the lender takes held.
void LendFds(FdLender give_back, void* lender);
void StopLendingFds(void* lender);

// Calls `open`; on EMFILE asks the lenders for fds and calls it again, a few times at most while
// they give some. Returns what the last call returned.
base::ErrnoOr<base::UniqueFd> OpenMakingRoom(
    absl::FunctionRef<base::ErrnoOr<base::UniqueFd>()> open);

}  // namespace ringfuse::daemon
