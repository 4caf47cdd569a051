// Tells "the kernel refuses kernel passthrough here" from "our passthrough failed", for the tests
// whose passthrough mount or CheckPassthroughWorks failed: only the first may skip them.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/session_options.h"
#include "gtest/gtest.h"
#include "ringfuse/wire.h"
#include "tests/daemon/test_files.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {

// Why the kernel refuses a server kernel passthrough here, asked of the kernel itself: a probe
// mount that wishes FUSE_PASSTHROUGH without requiring it, then one BACKING_OPEN of a memfd.
// Nothing when the kernel accepts both, or when the probe fails for a reason of ours.
inline std::optional<std::string> WhyKernelRefusesPassthrough() {
  ringfuse::testing::TempDir source("ringfuse-passthrough-probe");
  DaemonOptions options;
  options.source = source.path();
  options.passthrough = true;
  PassthroughFs fs(base::UniqueFd(::open(source.path().c_str(), O_PATH | O_CLOEXEC)), options);
  SessionOptions session = MakeSessionOptions(options);
  session.init.required_flags &= ~wire::init_flag::kPassthrough;  // ask, do not insist
  session.backing_files = &fs.backing_files();
  absl::StatusOr<std::unique_ptr<ringfuse::testing::ServedMount>> mount =
      ringfuse::testing::ServedMount::Start(fs, TransportKind::kThreads, session);
  if (!mount.ok()) return std::nullopt;
  const Negotiated& agreed = (*mount)->session().negotiated();
  if (!(agreed.kernel_flags & wire::init_flag::kPassthrough)) {
    return absl::StrFormat(
        "the kernel (FUSE 7.%u) does not offer FUSE_PASSTHROUGH at INIT (Linux 6.9+ with "
        "CONFIG_FUSE_PASSTHROUGH)",
        agreed.kernel_minor);
  }
  base::UniqueFd probe(::memfd_create("ringfuse-passthrough-probe", MFD_CLOEXEC));
  absl::StatusOr<BackingFile> backing = fs.backing_files().Open(probe.get());
  if (absl::IsPermissionDenied(backing.status())) return std::string(backing.status().message());
  return std::nullopt;
}

// For a test whose passthrough mount or check failed with `failure`: skips it with the kernel's
// reason where the kernel refuses passthrough, and fails it otherwise, since then the failure is
// ours. Returns from the test either way.
#define RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(failure)                           \
  do {                                                                                      \
    if (auto why = ::ringfuse::daemon::WhyKernelRefusesPassthrough()) GTEST_SKIP() << *why; \
    FAIL() << "the kernel allows passthrough here, so this failure is ours: " << (failure); \
  } while (false)

}  // namespace ringfuse::daemon
