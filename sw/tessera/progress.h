// A status line on stderr for long commands, drawn only when stderr is a terminal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::cli {

// While alive, redraws "TEXT, ELAPSED" in place on stderr four times a second, starting after
// `delay` so quick commands print nothing; erases it when destroyed. Disabled (no thread, no
// output) when `enabled` is false, so logs and pipes stay free of carriage returns.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled, std::chrono::milliseconds delay = std::chrono::milliseconds(1500));
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void set(std::string text);
  bool enabled() const { return enabled_; }

  // Whether stderr is a terminal (and TERM is not "dumb").
  static bool stderrIsTerminal();

 private:
  void loop();
  void draw();  // with mutex_ held

  bool enabled_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  bool stop_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace tessera::cli
