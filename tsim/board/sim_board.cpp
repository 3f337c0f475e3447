// The simulated iCEBreaker board: clocks the verilated board top and plays the host's UART on its lines.
#include "sim_board.h"

#include <algorithm>

namespace tessera::icebreaker_sim {

namespace {
constexpr int kResetCycles = 8;
constexpr int kDataBits = 8;
constexpr int kStopBit = kDataBits + 1;
}  // namespace

SimulatedBoard::SimulatedBoard(std::unique_ptr<BoardModel> model) : m_(std::move(model)) {
  m_->setReset(true);
  for (int i = 0; i < kResetCycles; ++i) tick();
  m_->setReset(false);
}

SimulatedBoard::~SimulatedBoard() = default;

void SimulatedBoard::send(const uint8_t* data, size_t n) { txQueue_.insert(txQueue_.end(), data, data + n); }

void SimulatedBoard::sendBreak(uint64_t cycles) { breakCycles_ = cycles; }

size_t SimulatedBoard::takeReceived(uint8_t* out, size_t n) {
  const size_t k = std::min(n, rxBytes_.size());
  std::copy(rxBytes_.begin(), rxBytes_.begin() + static_cast<std::ptrdiff_t>(k), out);
  rxBytes_.erase(rxBytes_.begin(), rxBytes_.begin() + static_cast<std::ptrdiff_t>(k));
  return k;
}

void SimulatedBoard::step(uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; ++i) tick();
}

void SimulatedBoard::tick() {
  // Host to board: one bit every kClksPerBit cycles.
  int rx = 1;
  if (breakCycles_) {
    rx = 0;
    --breakCycles_;
  } else {
    if (txBit_ < 0 && !txQueue_.empty()) {
      txByte_ = txQueue_.front();
      txQueue_.pop_front();
      txBit_ = 0;
      txCycles_ = kClksPerBit;
    }
    if (txBit_ == 0) rx = 0;
    else if (txBit_ > 0 && txBit_ <= kDataBits) rx = (txByte_ >> (txBit_ - 1)) & 1;
    if (txBit_ >= 0 && --txCycles_ == 0) {
      txCycles_ = kClksPerBit;
      if (++txBit_ > kStopBit) txBit_ = -1;
    }
  }
  const int line = m_->clock(rx);
  ++cycles_;

  // Board to host: a falling edge starts a frame, every bit is sampled in its middle.
  if (rxBit_ < 0) {
    if (!line) {
      rxBit_ = 0;
      rxCycles_ = kClksPerBit / 2;
    }
    return;
  }
  if (--rxCycles_ > 0) return;
  rxCycles_ = kClksPerBit;
  if (rxBit_ == 0) {
    rxBit_ = line ? -1 : 1;  // a glitch, not a start bit
    rxShift_ = 0;
    return;
  }
  if (rxBit_ <= kDataBits) {
    rxShift_ = static_cast<uint8_t>(rxShift_ | (line << (rxBit_ - 1)));
    ++rxBit_;
    return;
  }
  // The stop bit: a low one is a framing error, and the byte is dropped as a UART would.
  if (line) rxBytes_.push_back(rxShift_);
  rxBit_ = -1;
}

size_t SimChannel::read(uint8_t* data, size_t n, std::chrono::milliseconds timeout) {
  // One byte time per step keeps the check cheap; the wall clock is consulted every few thousand.
  constexpr uint64_t kStep = 10 * kClksPerBit;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t got = 0;
  for (uint64_t steps = 0;; ++steps) {
    got += board_->takeReceived(data + got, n - got);
    if (got == n) return got;
    if (steps % 256 == 255 && std::chrono::steady_clock::now() > deadline) return got;
    board_->step(kStep);
  }
}

void SimChannel::quiet(uint32_t bits) {
  while (!board_->lineIdle()) board_->step(kClksPerBit);
  board_->step(uint64_t(bits) * kClksPerBit);
  uint8_t sink[64];
  while (board_->takeReceived(sink, sizeof sink)) {
  }
}

}  // namespace tessera::icebreaker_sim
