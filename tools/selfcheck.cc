// ringfuse-selfcheck: checks the protocol layer against itself and shows what it speaks.
//
// It checks the opcode table, negotiates INIT with the offer this machine's kernel makes
// (protocol 7.45, flags as measured on Linux 6.18) and encodes INC_EPOCH, printing each step.
// Exits non-zero if anything disagrees.
#include <cstdio>
#include <string>

#include "ringfuse/init.h"
#include "ringfuse/notify.h"
#include "ringfuse/opcode.h"
#include "ringfuse/protocol/negotiate.h"
#include "ringfuse/wire.h"

namespace ringfuse {
namespace {

bool CheckOpcodeTable() {
  const std::string_view problem = OpcodeTableProblem();
  if (!problem.empty()) {
    std::printf("opcode table: FAILED: %.*s\n", static_cast<int>(problem.size()), problem.data());
    return false;
  }
  int count = 0;
  for (uint32_t number = 0; number <= kMaxOpcode; ++number) count += LookupOpcode(number) ? 1 : 0;
  std::printf("opcode table: %d opcodes, 1..%u, consistent\n", count, kMaxOpcode);
  return true;
}

bool CheckNegotiation() {
  wire::InitIn offer{};
  offer.major = 7;
  offer.minor = 45;
  offer.max_readahead = 128 * 1024;
  offer.flags = 0x73fffffb;  // what Linux 6.18 offers
  offer.flags2 = 0x7fd;      // ... with enable_uring=Y
  InitWishes wishes;
  wishes.flags |= wire::init_flag::kOverIoUring;
  const absl::StatusOr<InitResult> result = Negotiate(offer, wishes);
  if (!result.ok()) {
    std::printf("INIT negotiation: FAILED: %s\n", std::string(result.status().message()).c_str());
    return false;
  }
  const Negotiated& agreed = result->agreed;
  std::printf(
      "INIT negotiation with a 7.45 offer: minor %u, max_write %u, max_pages %u, "
      "io_uring %s\n  agreed flags: %s\n",
      agreed.minor, agreed.max_write, agreed.max_pages, agreed.io_uring ? "yes" : "no",
      InitFlagNames(agreed.flags).c_str());
  return agreed.minor == 45 && agreed.io_uring;
}

bool CheckIncEpoch() {
  const Notification epoch = Notification::IncEpoch();
  std::byte bytes[16];
  const size_t size = epoch.CopyTo(bytes);
  std::printf("INC_EPOCH notification (%zu bytes):", size);
  for (size_t i = 0; i < size; ++i) std::printf(" %02x", static_cast<unsigned>(bytes[i]));
  std::printf("\n");
  return size == sizeof(wire::OutHeader);
}

}  // namespace
}  // namespace ringfuse

int main() {
  std::printf("ringfuse speaks FUSE %u.%u (accepts kernels from 7.%u)\n",
              ringfuse::wire::kKernelMajor, ringfuse::wire::kKernelMinor,
              ringfuse::wire::kOldestSupportedMinor);
  // Every check runs and reports, even after one has failed.
  const bool opcodes_ok = ringfuse::CheckOpcodeTable();
  const bool negotiation_ok = ringfuse::CheckNegotiation();
  const bool inc_epoch_ok = ringfuse::CheckIncEpoch();
  const bool ok = opcodes_ok && negotiation_ok && inc_epoch_ok;
  std::printf("%s\n", ok ? "self-check passed" : "self-check FAILED");
  return ok ? 0 : 1;
}
