#include <algorithm>

#include "tools/conform/check.h"

namespace ringfuse::conform {

const std::vector<Check>& Catalogue() {
  static const std::vector<Check> catalogue = [] {
    std::vector<Check> all;
    for (std::vector<Check> (*group)() :
         {CoverageChecks, DirectoryChecks, NotifyChecks, PassthroughChecks, RequestChecks,
          BadReplyChecks, RevisionChecks}) {
      std::vector<Check> checks = group();
      all.insert(all.end(), checks.begin(), checks.end());
    }
    std::sort(all.begin(), all.end(),
              [](const Check& a, const Check& b) { return a.name < b.name; });
    return all;
  }();
  return catalogue;
}

}  // namespace ringfuse::conform
