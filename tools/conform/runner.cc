#include "tools/conform/runner.h"

#include <fnmatch.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_format.h"
#include "base/uring_switch.h"
#include "examples/memfs/memfs.h"
#include "tools/conform/context.h"

namespace ringfuse::conform {

namespace {

constexpr char kUringSwitchPath[] = "/sys/module/fuse/parameters/enable_uring";

std::string ReadUringSwitch() {
  std::ifstream file(kUringSwitchPath);
  std::string value;
  if (!(file >> value)) return "absent";
  return value;
}

// Why `check` cannot run on `transport` against `offer`, or empty.
std::string WhyNotOffered(const Check& check, TransportKind transport, const KernelOffer& offer) {
  if (transport == TransportKind::kUringCmd) {
    if (offer.enable_uring != "Y") {
      return absl::StrFormat(
          "FUSE-over-io_uring is off (%s is %s; ringfuse-conform --enable-uring switches it on "
          "as root)",
          kUringSwitchPath, offer.enable_uring);
    }
    if (!(offer.init_flags & wire::init_flag::kOverIoUring)) {
      return "the kernel does not offer OVER_IO_URING at INIT";
    }
  }
  if (check.needs_minor > offer.minor) {
    return absl::StrFormat("the kernel speaks protocol %d.%d; this needs 7.%d", offer.major,
                           offer.minor, check.needs_minor);
  }
  const uint64_t missing = check.needs_flags & ~offer.init_flags;
  if (missing != 0) {
    return absl::StrFormat("the kernel does not offer %s at INIT", InitFlagNames(missing));
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<const Check*>> SelectChecks(const std::vector<std::string>& patterns) {
  std::vector<const Check*> chosen;
  std::vector<bool> used(patterns.size(), false);
  for (const Check& check : Catalogue()) {
    const std::string name(check.name);
    bool wanted = patterns.empty();
    for (size_t i = 0; i < patterns.size(); ++i) {
      if (::fnmatch(patterns[i].c_str(), name.c_str(), 0) == 0) wanted = used[i] = true;
    }
    if (wanted) chosen.push_back(&check);
  }
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (!used[i]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--only: no check matches \"%s\" (ringfuse-conform --list names them)", patterns[i]));
    }
  }
  return chosen;
}

absl::StatusOr<KernelOffer> ProbeKernel() {
  KernelOffer offer;
  utsname name{};
  if (::uname(&name) == 0) offer.release = name.release;
  offer.enable_uring = ReadUringSwitch();
  examples::MemFs fs;
  CheckContext context("probe", TransportKind::kThreads, offer);
  std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return absl::FailedPreconditionError(context.Finish(0).reason);
  const Negotiated& negotiated = mount->negotiated();
  offer.major = wire::kKernelMajor;
  offer.minor = negotiated.kernel_minor;
  offer.init_flags = negotiated.kernel_flags;
  return offer;
}

Result RunCheck(const Check& check, TransportKind transport, const KernelOffer& offer,
                std::vector<uint32_t>& opcodes_seen) {
  CheckContext context(check.name, transport, offer);
  if (std::string why = WhyNotOffered(check, transport, offer); !why.empty()) {
    context.NotOffered(std::move(why));
    return context.Finish(0);
  }
  const auto start = std::chrono::steady_clock::now();
  check.run(context);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  opcodes_seen.insert(opcodes_seen.end(), context.opcodes_seen().begin(),
                      context.opcodes_seen().end());
  return context.Finish(took.count());
}

absl::StatusOr<Report> RunCatalogue(const RunOptions& options) {
  base::UringSwitch uring;
  if (options.enable_uring) {
    if (absl::Status on = uring.TurnOn(); !on.ok()) return on;
  }
  absl::StatusOr<KernelOffer> offer = ProbeKernel();
  if (!offer.ok()) return offer.status();
  Report report;
  report.kernel = *offer;
  report.ringfuse_minor = wire::kKernelMinor;
  std::vector<uint32_t> seen;
  for (const Check* check : options.checks) {
    for (TransportKind transport : options.transports) {
      Result result = RunCheck(*check, transport, *offer, seen);
      std::fprintf(stderr, "%-12s %-9s %s%s%s\n", std::string(OutcomeName(result.outcome)).c_str(),
                   result.transport.c_str(), result.check.c_str(),
                   result.reason.empty() ? "" : ": ", result.reason.c_str());
      report.results.push_back(std::move(result));
    }
  }
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (uint32_t opcode : seen) report.opcodes_seen.emplace_back(OpcodeName(opcode));
  return report;
}

}  // namespace ringfuse::conform
