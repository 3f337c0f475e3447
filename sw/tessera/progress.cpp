// The terminal status line: a background redraw so it keeps ticking through one long simulation.
#include "progress.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/ioctl.h>
#include <unistd.h>

namespace tessera::cli {

ProgressLine::ProgressLine(bool enabled, std::chrono::milliseconds delay)
    : enabled_(enabled), delay_(delay), start_(std::chrono::steady_clock::now()) {
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

bool ProgressLine::stderrIsTerminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(2) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

void ProgressLine::set(std::string text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(text);
}

void ProgressLine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_for(lock, delay_, [this] { return stop_; })) return;
  while (!stop_) {
    draw();
    wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; });
  }
}

void ProgressLine::draw() {
  const long secs = static_cast<long>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_).count());
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%ld:%02ld:%02ld", secs / 3600, secs / 60 % 60, secs % 60);
  std::string text = text_ + (text_.empty() ? "" : ", ") + elapsed + " elapsed";
  // A line wider than the terminal would wrap, and \r would then redraw only its last part.
  winsize ws{};
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && text.size() >= ws.ws_col) text.resize(ws.ws_col - 1);
  // \033[K clears what a longer earlier line left; one fputs keeps the line whole.
  const std::string line = "\r" + text + "\033[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace tessera::cli
