// tessera coverage report: tsim-cov's coverage files merged, a per-module table, an lcov tracefile and an HTML report.
#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "cli.h"
#include "subprocess.h"
#include "tessera/coverage/coverage.h"
#include "tessera/support/error.h"

namespace tessera::cli {

namespace {

std::string percent(const coverage::Tally& t) {
  if (t.total == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu/%llu %5.1f%%", static_cast<unsigned long long>(t.hit),
                static_cast<unsigned long long>(t.total), t.percent());
  return buf;
}

}  // namespace

int cmdCoverage(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string action, dir, out, exclusions;
  double needLine = 0, needToggle = 0;
  opts.add_options()
      ("action", po::value<std::string>(&action), "report")
      ("dir", po::value<std::string>(&dir), "directory of coverage files (tessera regress --coverage DIR)")
      ("out,o", po::value<std::string>(&out), "DIR: where the merged file, the lcov tracefile and the HTML report go "
                                              "(default: DIR/report)")
      ("exclusions", po::value<std::string>(&exclusions),
       "FILE: points the figures leave out, each with its reason (KIND MODULE PATTERN -- REASON a line)")
      ("uncovered", "list every point no run hit")
      ("covers", "list every cover point with its count")
      ("no-html", "skip the HTML report (genhtml)")
      ("require-line", po::value<double>(&needLine), "P: fail unless line coverage is at least P percent")
      ("require-toggle", po::value<double>(&needToggle), "P: fail unless toggle coverage is at least P percent")
      ("require-covers", "fail unless every cover point was hit");
  po::positional_options_description pos;
  pos.add("action", 1).add("dir", 1);
  po::variables_map vm;
  if (!parse("coverage", "report DIR [--out OUT] [--exclusions FILE] [--uncovered] [--covers] [--require-line P] [--require-toggle P] [--require-covers]",
             args, opts, &pos, &vm))
    return 0;
  if (action != "report") throw po::error("expected 'tessera coverage report DIR' (the one action is report)");
  if (dir.empty()) throw po::error("tessera coverage report: give the directory of coverage files");
  if (out.empty()) out = dir + "/report";

  coverage::Data data;
  data.addDirectory(dir);
  std::vector<coverage::Exclusion> excluded;
  if (!exclusions.empty()) excluded = coverage::readExclusions(exclusions);
  const std::vector<coverage::ModuleRow> rows = coverage::summarize(data, excluded);

  std::printf("coverage of %zu file(s) in %s, %zu points%s\n", data.files(), dir.c_str(), data.points().size(),
              excluded.empty() ? "" : (", " + std::to_string(excluded.size()) + " exclusions from " + exclusions).c_str());
  std::printf("%-28s %-22s %-22s %-22s %-18s\n", "module", "line", "branch", "toggle", "cover points");
  for (const auto& r : rows)
    std::printf("%-28s %-22s %-22s %-22s %-18s\n", r.module.c_str(), percent(r.line).c_str(), percent(r.branch).c_str(),
                percent(r.toggle).c_str(), percent(r.user).c_str());

  // The exclusions are reviewed on every report: one that matches no point names something that is
  // gone, and one whose point was hit is not unreachable after all.
  int stale = 0;
  for (const auto& e : excluded) {
    uint64_t matched = 0, hit = 0;
    for (const auto& [key, p] : data.points())
      if (coverage::excludes(e, p)) {
        ++matched;
        hit += p.count > 0;
      }
    const std::string where = exclusions + ":" + std::to_string(e.sourceLine) + ": " + coverage::kindName(e.kind) + " " +
                              e.module + " " + e.pattern;
    if (matched == 0) {
      std::fprintf(stderr, "%s matches no point: the design no longer has it; remove the exclusion\n", where.c_str());
      ++stale;
    } else if (hit > 0) {
      std::fprintf(stderr, "%s was hit (%llu of %llu points): it is reachable; remove the exclusion\n", where.c_str(),
                   static_cast<unsigned long long>(hit), static_cast<unsigned long long>(matched));
      ++stale;
    }
  }

  if (vm.count("covers")) {
    std::printf("\ncover points:\n");
    for (const auto& [key, p] : data.points())
      if (p.kind == coverage::Kind::kUser) std::printf("  %-48s %llu\n", p.comment.c_str(), static_cast<unsigned long long>(p.count));
  }

  if (vm.count("uncovered")) {
    std::printf("\nnot hit:\n");
    for (const auto& [key, p] : data.points()) {
      if (p.count > 0) continue;
      bool skip = false;
      for (const auto& e : excluded) skip = skip || coverage::excludes(e, p);
      if (skip) continue;
      std::printf("  %-6s %-24s %s:%u %s (%s)\n", coverage::kindName(p.kind), p.module.c_str(), p.file.c_str(), p.line,
                  p.comment.c_str(), p.scope.c_str());
    }
  }

  ::mkdir(out.c_str(), 0777);
  const std::string merged = out + "/coverage.dat", info = out + "/coverage.info";
  data.write(merged);
  data.writeLcov(info);
  std::printf("wrote %s (merged) and %s (lcov)\n", merged.c_str(), info.c_str());
  if (!vm.count("no-html")) {
    const std::string log = out + "/genhtml.log";
    const int rc = runTool({"genhtml", "--quiet", "--branch-coverage", "--legend", "--title", "Tessera RTL coverage",
                            "--output-directory", out + "/html", info},
                           log);
    if (rc == 0)
      std::printf("wrote %s/html/index.html\n", out.c_str());
    else if (rc == 127)
      std::fprintf(stderr, "tessera coverage: genhtml not found: install lcov (scripts/install-deps.sh); the table and the tracefile above stand\n");
    else
      std::fprintf(stderr, "tessera coverage: genhtml failed (exit %d, %s); the table and the tracefile above stand\n", rc, log.c_str());
  }

  const coverage::ModuleRow& total = rows.back();
  int failed = stale ? 1 : 0;
  if (vm.count("require-line") && total.line.percent() < needLine) {
    std::fprintf(stderr, "line coverage %.1f%% is below the required %.1f%%\n", total.line.percent(), needLine);
    failed = 1;
  }
  if (vm.count("require-toggle") && total.toggle.percent() < needToggle) {
    std::fprintf(stderr, "toggle coverage %.1f%% is below the required %.1f%%\n", total.toggle.percent(), needToggle);
    failed = 1;
  }
  if (vm.count("require-covers") && total.user.hit < total.user.total) {
    std::fprintf(stderr, "%llu of %llu cover points were never hit (--uncovered lists them)\n",
                 static_cast<unsigned long long>(total.user.total - total.user.hit),
                 static_cast<unsigned long long>(total.user.total));
    failed = 1;
  }
  return failed;
}

}  // namespace tessera::cli
