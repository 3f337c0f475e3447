// VerilatedBoardModel<V>: a verilated iCEBreaker board top (any of its builds: RTL, coverage, netlist) as the harness's BoardModel.
#pragma once

#include <verilated.h>

#include <memory>

#include "sim_board.h"

namespace tessera::icebreaker_sim {

template <class V>
class VerilatedBoardModel : public BoardModel {
 public:
  VerilatedBoardModel() : top_(std::make_unique<V>(&ctx_)) {
    top_->uart_rx_i = 1;
    top_->rst_ni = 0;
    top_->clk_i = 0;
    top_->eval();
  }
  ~VerilatedBoardModel() override { top_->final(); }
  void setReset(bool asserted) override { top_->rst_ni = asserted ? 0 : 1; }
  int clock(int rx) override {
    top_->uart_rx_i = rx & 1;
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    return top_->uart_tx_o;
  }
  V& top() { return *top_; }

 private:
  VerilatedContext ctx_;
  std::unique_ptr<V> top_;
};

}  // namespace tessera::icebreaker_sim
