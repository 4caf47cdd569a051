// The tools document their flags with hyphens (--big-file-mib, --enable-uring); absl spells flag
// names with underscores. Called before absl::ParseCommandLine.
#pragma once

namespace ringfuse::tools {

// Rewrites each "--flag-name[=value]" in argv to "--flag_name[=value]", up to a "--".
void AcceptHyphenatedFlags(int argc, char** argv);

}  // namespace ringfuse::tools
