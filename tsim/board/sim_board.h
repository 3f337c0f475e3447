// The verilated iCEBreaker board top with its UART lines driven and sampled bit by bit, as the host-link channel of icebreaker-sim and of the pty stand-in board.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "tessera/runtime/icebreaker.h"

namespace tessera::icebreaker_sim {

// Clock cycles per UART bit of the simulated board (the verilated top's ClksPerBit): the board's
// 12 MHz at 115200 baud would be 104, but each simulated cycle costs the same either way, so the
// simulation runs the link as fast as the UART can be clocked.
constexpr int kClksPerBit = 4;

// One verilated board top behind the harness: its reset, one clock cycle with the host's line
// driven, and its transmit line (verilated_board_model.h; a plain and a coverage model).
class BoardModel {
 public:
  virtual ~BoardModel() = default;
  virtual void setReset(bool asserted) = 0;
  // One rising and falling edge with the receive line at `rx`; returns the transmit line after it.
  virtual int clock(int rx) = 0;
};

// The board top verilated as the bitstream is built (rtl_board_model.cpp): icebreaker-sim's.
std::unique_ptr<BoardModel> makeRtlBoardModel();

class SimulatedBoard {
 public:
  // Over the plain RTL model (makeRtlBoardModel), or over `model`.
  SimulatedBoard();
  explicit SimulatedBoard(std::unique_ptr<BoardModel> model);
  ~SimulatedBoard();
  SimulatedBoard(const SimulatedBoard&) = delete;
  SimulatedBoard& operator=(const SimulatedBoard&) = delete;

  // Bytes queued for the board's receive line, sent back to back.
  void send(const uint8_t* data, size_t n);
  // Advances the clock `cycles` cycles.
  void step(uint64_t cycles);
  // Bytes the board transmitted so far, taken from the front.
  size_t takeReceived(uint8_t* out, size_t n);
  size_t received() const { return rxBytes_.size(); }
  // Nothing left to send to the board.
  bool lineIdle() const { return txQueue_.empty() && txBit_ < 0; }
  uint64_t cycles() const { return cycles_; }
  // Drives the receive line low (a break) for `cycles` cycles: a framing error at the board.
  void sendBreak(uint64_t cycles);

 private:
  void tick();
  std::unique_ptr<BoardModel> m_;
  // Host-to-board line: the byte being sent, its bit (-1: idle; 0 start, 1-8 data, 9 stop) and
  // the cycles left of that bit.
  std::deque<uint8_t> txQueue_;
  uint8_t txByte_ = 0;
  int txBit_ = -1;
  int txCycles_ = 0;
  uint64_t breakCycles_ = 0;
  // Board-to-host line: the same from the sampling side.
  int rxBit_ = -1;
  int rxCycles_ = 0;
  uint8_t rxShift_ = 0;
  std::deque<uint8_t> rxBytes_;
  uint64_t cycles_ = 0;
};

// The simulated board as a byte channel: time passes on the board only while the host waits for
// it, so a read advances the clock until its bytes arrive (or the wall-clock timeout passes).
class SimChannel : public runtime::icebreaker::ByteChannel {
 public:
  explicit SimChannel(std::shared_ptr<SimulatedBoard> board) : board_(std::move(board)) {}
  void write(const uint8_t* data, size_t n) override { board_->send(data, n); }
  size_t read(uint8_t* data, size_t n, std::chrono::milliseconds timeout) override;
  void quiet(uint32_t bits) override;
  std::string describe() const override { return "the simulated iCEBreaker board"; }
  SimulatedBoard& board() { return *board_; }

 private:
  std::shared_ptr<SimulatedBoard> board_;
};

}  // namespace tessera::icebreaker_sim
