// Board memory standing in for DRAM: an AXI4 slave (INCR bursts, one at a time) over a RAM, with a
// second, word-wide port for the host link; addresses past the RAM answer with SLVERR.
`include "tessera_config.svh"

module tessera_board_mem #(
  // Bytes of RAM: the iCE40 UP5K's four 32 KiB SPRAMs by default.
  parameter int MemBytes = 131072,
  parameter int BusWidth = 32,
  localparam int BusBytes = BusWidth / 8,
  localparam int Words = MemBytes / BusBytes,
  localparam int WordAddrWidth = $clog2(Words)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // AXI4 slave, from the accelerator's master.
  input  logic [31:0]              s_axi_araddr_i,
  input  logic [7:0]               s_axi_arlen_i,
  input  logic                     s_axi_arvalid_i,
  output logic                     s_axi_arready_o,
  output logic [BusWidth-1:0]      s_axi_rdata_o,
  output logic [1:0]               s_axi_rresp_o,
  output logic                     s_axi_rlast_o,
  output logic                     s_axi_rvalid_o,
  input  logic                     s_axi_rready_i,
  input  logic [31:0]              s_axi_awaddr_i,
  input  logic [7:0]               s_axi_awlen_i,
  input  logic                     s_axi_awvalid_i,
  output logic                     s_axi_awready_o,
  input  logic [BusWidth-1:0]      s_axi_wdata_i,
  input  logic [BusBytes-1:0]      s_axi_wstrb_i,
  input  logic                     s_axi_wlast_i,
  input  logic                     s_axi_wvalid_i,
  output logic                     s_axi_wready_o,
  output logic [1:0]               s_axi_bresp_o,
  output logic                     s_axi_bvalid_o,
  input  logic                     s_axi_bready_i,
  // Host-link port: a request is granted when no burst is in progress; read data follows a grant
  // by one cycle (rvalid_o).
  input  logic                     req_i,
  input  logic                     we_i,
  input  logic [WordAddrWidth-1:0] addr_i,
  input  logic [BusWidth-1:0]      wdata_i,
  input  logic [BusBytes-1:0]      be_i,
  output logic                     gnt_o,
  output logic                     rvalid_o,
  output logic [BusWidth-1:0]      rdata_o
);

  localparam logic [31:0] AddrLimit = 32'(MemBytes);
  localparam int ByteOffsetBits = $clog2(BusBytes);

  typedef enum logic [2:0] {StIdle, StReadIssue, StReadBeat, StWriteBeat, StWriteResp} state_e;

  state_e state_q, state_d;
  logic [31:0] addr_q, addr_d;
  logic [7:0] beats_left_q, beats_left_d;
  logic error_q, error_d;
  logic rvalid_q, rvalid_d;

  logic ram_re, ram_in_range;
  logic [BusBytes-1:0] ram_we;
  logic [WordAddrWidth-1:0] ram_addr;
  logic [BusWidth-1:0] ram_wdata, ram_rdata;

  assign ram_in_range = addr_q < AddrLimit;

  always_comb begin
    state_d = state_q;
    addr_d = addr_q;
    beats_left_d = beats_left_q;
    error_d = error_q;
    rvalid_d = 1'b0;
    s_axi_arready_o = 1'b0;
    s_axi_awready_o = 1'b0;
    s_axi_wready_o = 1'b0;
    s_axi_rvalid_o = 1'b0;
    s_axi_bvalid_o = 1'b0;
    gnt_o = 1'b0;
    ram_re = 1'b0;
    ram_we = '0;
    ram_addr = addr_q[ByteOffsetBits +: WordAddrWidth];
    ram_wdata = s_axi_wdata_i;
    unique case (state_q)
      StIdle: begin
        // The accelerator first: the host link only moves data while no run is in progress.
        if (s_axi_arvalid_i) begin
          s_axi_arready_o = 1'b1;
          addr_d = s_axi_araddr_i;
          beats_left_d = s_axi_arlen_i;
          state_d = StReadIssue;
        end else if (s_axi_awvalid_i) begin
          s_axi_awready_o = 1'b1;
          addr_d = s_axi_awaddr_i;
          beats_left_d = s_axi_awlen_i;
          error_d = 1'b0;
          state_d = StWriteBeat;
        end else if (req_i) begin
          gnt_o = 1'b1;
          ram_addr = addr_i;
          ram_wdata = wdata_i;
          ram_we = we_i ? be_i : '0;
          ram_re = !we_i;
          rvalid_d = !we_i;
        end
      end
      StReadIssue: begin
        ram_re = 1'b1;
        state_d = StReadBeat;
      end
      StReadBeat: begin
        s_axi_rvalid_o = 1'b1;
        if (s_axi_rready_i) begin
          addr_d = addr_q + 32'(BusBytes);
          beats_left_d = beats_left_q - 1'b1;
          state_d = beats_left_q == '0 ? StIdle : StReadIssue;
        end
      end
      StWriteBeat: begin
        s_axi_wready_o = 1'b1;
        if (s_axi_wvalid_i) begin
          if (ram_in_range) ram_we = s_axi_wstrb_i;
          else error_d = 1'b1;
          addr_d = addr_q + 32'(BusBytes);
          beats_left_d = beats_left_q - 1'b1;
          if (s_axi_wlast_i || beats_left_q == '0) state_d = StWriteResp;
        end
      end
      StWriteResp: begin
        s_axi_bvalid_o = 1'b1;
        if (s_axi_bready_i) state_d = StIdle;
      end
      default: state_d = StIdle;
    endcase
  end

  assign s_axi_rdata_o = ram_in_range ? ram_rdata : '0;
  assign s_axi_rresp_o = ram_in_range ? tessera_config_pkg::AXI_RESP_OKAY : tessera_config_pkg::AXI_RESP_SLVERR;
  assign s_axi_rlast_o = beats_left_q == '0;
  assign s_axi_bresp_o = error_q ? tessera_config_pkg::AXI_RESP_SLVERR : tessera_config_pkg::AXI_RESP_OKAY;
  assign rvalid_o = rvalid_q;
  assign rdata_o = ram_rdata;

  // Reads and writes share the address (never both in a cycle): the RAM has one port, as SPRAM.
  tessera_board_spram #(.Words(Words), .BusWidth(BusWidth)) u_ram (
    .clk_i, .we_i(ram_we), .re_i(ram_re), .addr_i(ram_addr), .wdata_i(ram_wdata), .rdata_o(ram_rdata)
  );

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      addr_q       <= '0;
      beats_left_q <= '0;
      error_q      <= 1'b0;
      rvalid_q     <= 1'b0;
    end else begin
      state_q      <= state_d;
      addr_q       <= addr_d;
      beats_left_q <= beats_left_d;
      error_q      <= error_d;
      rvalid_q     <= rvalid_d;
    end
  end

`ifndef SYNTHESIS
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               state_q inside {StIdle, StReadIssue, StReadBeat, StWriteBeat, StWriteResp})
    else $error("tessera_board_mem: invalid state %0d", state_q);
`endif

endmodule
