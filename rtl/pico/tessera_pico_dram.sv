// The pico core's DRAM port: one 32-bit word per request as a single-beat AXI4 read or write, so
// the core needs no burst logic; an error response is passed back with the completion.
`include "tessera_config.svh"

module tessera_pico_dram #(
  parameter int BusWidth = 32
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // Word port: req_i held with stable fields until done_o, which lasts one cycle.
  input  logic                  req_i,
  input  logic                  we_i,
  input  logic [31:0]           addr_i,
  input  logic [BusWidth-1:0]   wdata_i,
  output logic                  done_o,
  output logic                  error_o,
  output logic [BusWidth-1:0]   rdata_o,
  // AXI4 master.
  output logic [31:0]           m_axi_araddr_o,
  output logic [7:0]            m_axi_arlen_o,
  output logic [2:0]            m_axi_arsize_o,
  output logic [1:0]            m_axi_arburst_o,
  output logic                  m_axi_arvalid_o,
  input  logic                  m_axi_arready_i,
  input  logic [BusWidth-1:0]   m_axi_rdata_i,
  // Only the error bit of a response matters (OKAY and EXOKAY both succeed).
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [1:0]            m_axi_rresp_i,
  /* verilator lint_on UNUSEDSIGNAL */
  // Every burst is one beat long: the last-beat flag carries nothing the port needs.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic                  m_axi_rlast_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic                  m_axi_rvalid_i,
  output logic                  m_axi_rready_o,
  output logic [31:0]           m_axi_awaddr_o,
  output logic [7:0]            m_axi_awlen_o,
  output logic [2:0]            m_axi_awsize_o,
  output logic [1:0]            m_axi_awburst_o,
  output logic                  m_axi_awvalid_o,
  input  logic                  m_axi_awready_i,
  output logic [BusWidth-1:0]   m_axi_wdata_o,
  output logic [BusWidth/8-1:0] m_axi_wstrb_o,
  output logic                  m_axi_wlast_o,
  output logic                  m_axi_wvalid_o,
  input  logic                  m_axi_wready_i,
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [1:0]            m_axi_bresp_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic                  m_axi_bvalid_i,
  output logic                  m_axi_bready_o
);

  localparam logic [2:0] SizeBus = 3'($clog2(BusWidth / 8));

  typedef enum logic [2:0] {StIdle, StReadAddr, StReadData, StWrite, StWriteResp} state_e;
  state_e state_q, state_d;
  // The write address and data handshakes complete in either order.
  logic aw_done_q, aw_done_d, w_done_q, w_done_d;

  always_comb begin
    state_d = state_q;
    aw_done_d = aw_done_q;
    w_done_d = w_done_q;
    done_o = 1'b0;
    error_o = 1'b0;
    unique case (state_q)
      StIdle: begin
        if (req_i) begin
          state_d = we_i ? StWrite : StReadAddr;
          aw_done_d = 1'b0;
          w_done_d = 1'b0;
        end
      end
      StReadAddr: if (m_axi_arready_i) state_d = StReadData;
      StReadData: begin
        if (m_axi_rvalid_i) begin
          done_o = 1'b1;
          error_o = m_axi_rresp_i[1];
          state_d = StIdle;
        end
      end
      StWrite: begin
        if (m_axi_awready_i) aw_done_d = 1'b1;
        if (m_axi_wready_i) w_done_d = 1'b1;
        if (aw_done_d && w_done_d) state_d = StWriteResp;
      end
      StWriteResp: begin
        if (m_axi_bvalid_i) begin
          done_o = 1'b1;
          error_o = m_axi_bresp_i[1];
          state_d = StIdle;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      aw_done_q <= 1'b0;
      w_done_q <= 1'b0;
    end else begin
      state_q <= state_d;
      aw_done_q <= aw_done_d;
      w_done_q <= w_done_d;
    end
  end

  assign rdata_o = m_axi_rdata_i;
  assign m_axi_araddr_o = addr_i;
  assign m_axi_arlen_o = '0;
  assign m_axi_arsize_o = SizeBus;
  assign m_axi_arburst_o = tessera_config_pkg::AXI_BURST_INCR;
  assign m_axi_arvalid_o = state_q == StReadAddr;
  assign m_axi_rready_o = state_q == StReadData;
  assign m_axi_awaddr_o = addr_i;
  assign m_axi_awlen_o = '0;
  assign m_axi_awsize_o = SizeBus;
  assign m_axi_awburst_o = tessera_config_pkg::AXI_BURST_INCR;
  assign m_axi_awvalid_o = state_q == StWrite && !aw_done_q;
  assign m_axi_wdata_o = wdata_i;
  assign m_axi_wstrb_o = '1;
  assign m_axi_wlast_o = 1'b1;
  assign m_axi_wvalid_o = state_q == StWrite && !w_done_q;
  assign m_axi_bready_o = state_q == StWriteResp;

`ifndef SYNTHESIS
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               state_q inside {StIdle, StReadAddr, StReadData, StWrite, StWriteResp})
    else $error("tessera_pico_dram: invalid state %0d", state_q);
`endif

endmodule
