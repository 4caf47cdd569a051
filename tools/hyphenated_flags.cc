#include "tools/hyphenated_flags.h"

#include <string_view>

namespace ringfuse::tools {

void AcceptHyphenatedFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") break;
    if (argv[i][0] != '-' || argv[i][1] != '-') continue;
    for (char* c = argv[i] + 2; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') *c = '_';
    }
  }
}

}  // namespace ringfuse::tools
