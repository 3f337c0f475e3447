// C-simulation stand-in for Xilinx's hls_stream.h: the FIFO hls::stream<T> (Vivado/Vitis HLS replace it).
#ifndef TESSERA_HLS_STREAM_H
#define TESSERA_HLS_STREAM_H

// Written from scratch for Tessera's C simulation. As in Vitis HLS, the optional second template
// argument is the FIFO depth; 0 (the default) means unbounded, which is how Xilinx's own C
// simulation models every stream. A bounded depth makes full() and write_nb() report back-pressure,
// which the sequential C-simulation driver needs to reproduce the hardware's queue limits.
// A blocking read of an empty stream or write of a full one would hang the hardware; in C
// simulation it throws std::logic_error instead, so a driver bug cannot hang the simulator.

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>

namespace hls {

template <typename T, int DEPTH = 0>
class stream {
  static_assert(DEPTH >= 0, "a stream depth is 0 (unbounded) or positive");

 public:
  stream() = default;
  explicit stream(const char* name) : name_(name ? name : "") {}
  stream(const stream&) = delete;  // a FIFO is a channel, never a value
  stream& operator=(const stream&) = delete;

  bool empty() const { return fifo_.empty(); }
  bool full() const { return DEPTH > 0 && fifo_.size() >= static_cast<std::size_t>(DEPTH); }
  std::size_t size() const { return fifo_.size(); }
  static constexpr int depth() { return DEPTH; }
  const std::string& name() const { return name_; }

  T read() {
    if (fifo_.empty()) throw std::logic_error("hls::stream '" + name_ + "': read of an empty stream (would block forever)");
    T v = fifo_.front();
    fifo_.pop_front();
    return v;
  }
  void read(T& v) { v = read(); }
  void write(const T& v) {
    if (full()) throw std::logic_error("hls::stream '" + name_ + "': write to a full stream (would block forever)");
    fifo_.push_back(v);
  }
  bool read_nb(T& v) {
    if (fifo_.empty()) return false;
    v = fifo_.front();
    fifo_.pop_front();
    return true;
  }
  bool write_nb(const T& v) {
    if (full()) return false;
    fifo_.push_back(v);
    return true;
  }
  void operator>>(T& v) { read(v); }
  void operator<<(const T& v) { write(v); }
  // C simulation only: empties the FIFO (a hardware reset does the same).
  void clear() { fifo_.clear(); }

 private:
  std::deque<T> fifo_;
  std::string name_;
};

}  // namespace hls

#endif  // TESSERA_HLS_STREAM_H
