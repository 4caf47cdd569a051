// One conformance check: a name, what a pass shows, what the kernel must offer for the check to
// mean anything, and the function that runs it. A check is one short function in the file of its
// group (checks_<group>.cc), listed in that file's table; docs/conformance.md shows how to add one.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ringfuse::conform {

class CheckContext;

struct Check {
  std::string_view name;     // "<group>.<what>", e.g. "notify.inc_epoch"
  std::string_view summary;  // one sentence: what a pass shows
  // INIT flags (wire::init_flag) the kernel must offer; without them the check is "not offered".
  uint64_t needs_flags = 0;
  // The protocol minor that brought what the check exercises (0: any); a kernel that speaks an
  // older minor does not offer it.
  uint32_t needs_minor = 0;
  void (*run)(CheckContext&) = nullptr;
};

// The groups' tables, one function per checks_<group>.cc.
std::vector<Check> CoverageChecks();
std::vector<Check> DirectoryChecks();
std::vector<Check> NotifyChecks();
std::vector<Check> PassthroughChecks();
std::vector<Check> RequestChecks();
std::vector<Check> BadReplyChecks();
std::vector<Check> RevisionChecks();

// Every check of every group, sorted by name; the one list --list prints and the runner walks.
const std::vector<Check>& Catalogue();

}  // namespace ringfuse::conform
