// JUnit XML reports of a regression run, in the dialect Jenkins and GitLab read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/regress/runner.h"

namespace tessera::regress {

// One <testsuites> with one <testsuite> for the run (or shard), one <testcase> per program of the
// shard: classname "regress.CONFIG.SIZE", name "seed S on TARGETS". A mismatch is a <failure>
// whose message names seed, target and first difference (the body holds the full report and the
// reproducer's path), a generator error an <error>, a program not run after an earlier failure
// (no --keep-going) or an interruption <skipped>. Text is escaped and invalid UTF-8 and control characters replaced,
// so any error message still gives well-formed XML.
std::string formatJunit(const RegressOptions& o, const RegressSummary& sum);

// Throws tessera::Error naming `path` if a report could not be written there: a directory, or a
// directory part that does not exist. Checked before a run so a long run does not end in vain.
void checkJunitPath(const std::string& path);

// Writes the report, replacing an existing file (CI reruns overwrite their report) but only as a
// whole: the text goes to a temporary file next to it, renamed over it once complete. Throws
// tessera::Error naming the path on any failure.
void writeJunitFile(const std::string& path, const std::string& xml);

// The reports of the shards of one run (formatJunit's, one <testsuite> each) joined into one
// <testsuites>: the run's report. Every file must be a shard of the same run (config, size,
// targets, first seed, program count, shard count) and every shard 0..N-1 must be there once;
// otherwise throws tessera::Error naming the file and what differs or is missing.
struct MergedJunit {
  std::string xml;
  uint64_t tests = 0, failures = 0, errors = 0, skipped = 0, shards = 0, programs = 0;
};
MergedJunit mergeJunit(const std::vector<std::string>& paths);

}  // namespace tessera::regress
