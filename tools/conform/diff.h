// What changed between two reports, for bisecting a kernel regression: the kernel and protocol,
// INIT flags newly offered or gone, checks whose outcome flipped (or that one report lacks), the
// opcodes a client action produced, and opcodes newly sent or no longer sent.
#pragma once

#include <string>
#include <vector>

#include "tools/conform/result.h"

namespace ringfuse::conform {

// One line per difference, "A" being `before` and "B" `after`; empty when nothing changed.
std::vector<std::string> DiffReports(const Report& before, const Report& after);

}  // namespace ringfuse::conform
