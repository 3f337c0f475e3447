// tessera_bench_side_by_side: two commands run as whole processes, alternated, with median wall and CPU time each.
//
// usage: tessera_bench_side_by_side [--runs N] [--dir DIR] [--json] -- COMMAND_A... -- COMMAND_B...
//
// Each round runs A, then B, each in DIR with its output thrown away. CPU time is the child's user
// plus system time from wait4(), which, unlike a counter enabled at exec (perf stat's task-clock),
// includes the exec itself and the kernel's teardown of the process at exit. Alternating keeps
// both commands under the same machine load and cache state: each starts right after the other.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Sample {
  double wallMs, cpuMs;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tessera_bench_side_by_side: error: %s\n"
               "usage: tessera_bench_side_by_side [--runs N] [--dir DIR] [--json] -- COMMAND_A... -- COMMAND_B...\n",
               why);
  std::exit(2);
}

// Runs one command to completion; a command that cannot start or fails ends the benchmark, since
// its time would measure an error path.
Sample runOnce(const std::vector<char*>& argv, const std::string& dir) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("tessera_bench_side_by_side: fork");
    std::exit(1);
  }
  if (pid == 0) {
    const int devNull = ::open("/dev/null", O_WRONLY);
    if (devNull >= 0) ::dup2(devNull, 1);
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) {
      std::fprintf(stderr, "tessera_bench_side_by_side: cannot enter %s: %s\n", dir.c_str(), std::strerror(errno));
      ::_exit(126);
    }
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "tessera_bench_side_by_side: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0)
    if (errno != EINTR) {
      std::perror("tessera_bench_side_by_side: wait4");
      std::exit(1);
    }
  const double wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "tessera_bench_side_by_side: %s failed (%s %d); not timing a failing command\n", argv[0],
                 WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    std::exit(1);
  }
  auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return {wallMs, ms(usage.ru_utime) + ms(usage.ru_stime)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::string dir;
  bool json = false;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end || n < 1 || n > 100000) usage("--runs takes a count from 1 to 100000");
      runs = int(n);
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--json") {
      json = true;
    } else {
      usage(("unknown or incomplete option '" + arg + "'").c_str());
    }
  }
  std::vector<char*> commands[2];
  int which = -1;
  for (; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0 && which < 1) {
      ++which;
      continue;
    }
    commands[which].push_back(argv[i]);
  }
  if (which != 1 || commands[0].empty() || commands[1].empty()) usage("give two commands, each after a '--'");
  for (auto& c : commands) c.push_back(nullptr);

  std::vector<double> wall[2], cpu[2];
  for (int r = 0; r < runs; ++r)
    for (int c = 0; c < 2; ++c) {
      const Sample s = runOnce(commands[c], dir);
      wall[c].push_back(s.wallMs);
      cpu[c].push_back(s.cpuMs);
    }
  const double wallA = median(wall[0]), wallB = median(wall[1]), cpuA = median(cpu[0]), cpuB = median(cpu[1]);
  if (json) {
    std::printf("{\"runs\": %d, \"a\": {\"wall_ms\": %.3f, \"cpu_ms\": %.3f}, \"b\": {\"wall_ms\": %.3f, \"cpu_ms\": %.3f}, "
                "\"b_over_a\": {\"wall\": %.3f, \"cpu\": %.3f}}\n",
                runs, wallA, cpuA, wallB, cpuB, wallB / wallA, cpuB / cpuA);
  } else {
    std::printf("A %s: wall %.3f ms, CPU %.3f ms\nB %s: wall %.3f ms, CPU %.3f ms\n"
                "B / A: wall %.2fx, CPU %.2fx (medians of %d alternated runs)\n",
                commands[0][0], wallA, cpuA, commands[1][0], wallB, cpuB, wallB / wallA, cpuB / cpuA, runs);
  }
  return 0;
}
