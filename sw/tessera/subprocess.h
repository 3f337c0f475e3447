// Running another program from the CLI (Yosys, gnuplot, CMake, tessera itself) with its output to a log.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera::cli {

// Runs `argv` (looked up on PATH) with stdout and stderr to the file `log` and, on top of this
// process's environment, the variables `env` sets; its exit status, 127 when it could not start,
// 128 when a signal ended it.
int runTool(const std::vector<std::string>& argv, const std::string& log,
            const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace tessera::cli
