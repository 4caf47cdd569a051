#include "tools/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "absl/strings/str_format.h"
#include "tools/percentile.h"

namespace ringfuse::tools {
namespace {

// The published table this benchmark reproduces: a small VM, mean of 100 runs.
struct SeedFigure {
  int inodes;
  double per_inode_us;  // INVAL_ENTRY and INVAL_INODE one by one: `entries`
  double epoch_us;      // one INC_EPOCH
};
constexpr SeedFigure kSeed[] = {{20, 330, 40}, {8000, 4300, 45}};

struct Summary {
  double mean = 0;
  double p99 = 0;
  double median = 0;
};

using Field = double PublishSample::*;

std::vector<double> Column(const std::vector<PublishSample>& samples, Field field) {
  std::vector<double> values;
  for (const PublishSample& sample : samples) values.push_back(sample.*field);
  return values;
}

std::optional<Summary> Summarize(const TreeResult& result, const std::string& method, Field field) {
  auto found = result.by_method.find(method);
  if (found == result.by_method.end() || found->second.empty()) return std::nullopt;
  std::vector<double> values = Column(found->second, field);
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  return Summary{sum / static_cast<double>(values.size()), Percentile(values, 0.99),
                 Percentile(values, 0.5)};
}

std::optional<SeedFigure> SeedFor(int inodes) {
  for (const SeedFigure& seed : kSeed) {
    if (seed.inodes == inodes) return seed;
  }
  return std::nullopt;
}

void PrintHeader(const std::vector<TreeResult>& results) {
  std::printf("| method |");
  for (const TreeResult& result : results) std::printf(" %d inodes |", result.inodes);
  std::printf("\n|---|");
  for (size_t i = 0; i < results.size(); ++i) std::printf("---|");
  std::printf("\n");
}

void PrintTimeRows(const std::vector<TreeResult>& results, const std::vector<std::string>& methods,
                   Field field) {
  for (const std::string& method : methods) {
    std::printf("| %s |", method.c_str());
    for (const TreeResult& result : results) {
      const std::optional<Summary> s = Summarize(result, method, field);
      if (s) {
        std::printf(" %.1f / %.1f / %.1f |", s->mean, s->p99, s->median);
      } else {
        std::printf(" - |");
      }
    }
    std::printf("\n");
  }
}

// A row whose cell is computed from a tree's result, "-" where it cannot be.
template <typename CellFn>
void PrintRow(const std::string& label, const std::vector<TreeResult>& results, CellFn cell) {
  std::printf("| %s |", label.c_str());
  for (const TreeResult& result : results) {
    const std::optional<double> value = cell(result);
    if (value) {
      std::printf(" %.1f |", *value);
    } else {
      std::printf(" - |");
    }
  }
  std::printf("\n");
}

void PrintSeedAndRatios(const std::vector<TreeResult>& results,
                        const std::vector<std::string>& methods) {
  PrintRow("seed: per-inode (entries), mean", results, [](const TreeResult& r) {
    const std::optional<SeedFigure> seed = SeedFor(r.inodes);
    return seed ? std::optional<double>(seed->per_inode_us) : std::nullopt;
  });
  PrintRow("seed: epoch, mean", results, [](const TreeResult& r) {
    const std::optional<SeedFigure> seed = SeedFor(r.inodes);
    return seed ? std::optional<double>(seed->epoch_us) : std::nullopt;
  });
  for (const std::string& method : methods) {
    if (method == "epoch" || method == "none") continue;
    PrintRow(absl::StrFormat("ratio %s / epoch (means)", method), results,
             [&method](const TreeResult& r) -> std::optional<double> {
               const std::optional<Summary> per_inode =
                   Summarize(r, method, &PublishSample::invalidate_us);
               const std::optional<Summary> epoch =
                   Summarize(r, "epoch", &PublishSample::invalidate_us);
               if (!per_inode || !epoch || epoch->mean <= 0) return std::nullopt;
               return per_inode->mean / epoch->mean;
             });
  }
  PrintRow("seed ratio per-inode / epoch", results, [](const TreeResult& r) {
    const std::optional<SeedFigure> seed = SeedFor(r.inodes);
    return seed ? std::optional<double>(seed->per_inode_us / seed->epoch_us) : std::nullopt;
  });
}

// Means per publish of what the daemon reported, and the extremes of what the walks saw.
void PrintConcerned(const std::vector<TreeResult>& results,
                    const std::vector<std::string>& methods) {
  std::printf(
      "| method | inodes in tree | switch_us | entries | inodes | messages | not_cached | lookups "
      "after, min..max |\n|---|---|---|---|---|---|---|---|\n");
  for (const std::string& method : methods) {
    for (const TreeResult& result : results) {
      auto found = result.by_method.find(method);
      if (found == result.by_method.end() || found->second.empty()) continue;
      auto mean = [&](Field field) { return Summarize(result, method, field)->mean; };
      const std::vector<double> lookups = Column(found->second, &PublishSample::lookups_after);
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f..%.0f |\n", method.c_str(),
                  result.inodes, mean(&PublishSample::switch_us), mean(&PublishSample::entries),
                  mean(&PublishSample::inodes), mean(&PublishSample::messages),
                  mean(&PublishSample::not_cached),
                  *std::min_element(lookups.begin(), lookups.end()),
                  *std::max_element(lookups.begin(), lookups.end()));
    }
  }
}

}  // namespace

void PrintTables(const std::vector<TreeResult>& results, const std::vector<std::string>& methods,
                 int runs) {
  if (results.empty()) return;
  std::printf("\ntrees (below the root):");
  for (const TreeResult& r : results) {
    std::printf(" %d inodes = %d directories, %d files, %d symlinks;", r.inodes, r.tree.directories,
                r.tree.files, r.tree.symlinks);
  }
  std::printf("\nringfused served with: %s\n", results.front().transport_choice.c_str());
  std::printf(
      "\ninvalidate_us measured by ringfused (from the first notification until the kernel took "
      "the last), %d runs; cell: mean / p99 / median, us\n",
      runs);
  PrintHeader(results);
  PrintTimeRows(results, methods, &PublishSample::invalidate_us);
  PrintSeedAndRatios(results, methods);
  std::printf(
      "\nround trip of the publish measured here (control socket, root switch and invalidation), "
      "%d runs; cell: mean / p99 / median, us\n",
      runs);
  PrintHeader(results);
  PrintTimeRows(results, methods, &PublishSample::round_trip_us);
  std::printf("\nwhat a publish concerned (means over runs, from ringfused's replies):\n");
  PrintConcerned(results, methods);
}

}  // namespace ringfuse::tools
