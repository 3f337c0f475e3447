// iCEBreaker board top: the pico accelerator (rtl/pico), a board memory in the UP5K's SPRAMs behind
// its AXI master standing in for DRAM, and the UART host link that reaches its registers and that
// memory (docs/fpga.md). The bitstream and icebreaker-sim are built from this top.
`include "tessera_config.svh"

module tessera_icebreaker_top #(
  // Clock cycles per UART bit: the clock frequency over the baud rate (12 MHz / 115200 rounds to 104).
  parameter int ClksPerBit = 104,
  // The UP5K's four 32 KiB SPRAMs.
  parameter int MemBytes = 131072,
  parameter int MaxBlock = 256,
  // The quiet line time after which a partial request is dropped: 64 bit times.
  parameter int IdleTimeoutBits = 64
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic uart_rx_i,
  output logic uart_tx_o,
  // The accelerator's interrupt, for an LED.
  output logic irq_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;

  // ------------------------------------------------------------ reset
  // The button (rst_ni) is released at power-up, so the design also resets itself: the iCE40
  // clears every flip-flop at configuration, and this counter holds reset until it has counted
  // up to all ones (7 cycles from zero, fewer from any other start).
  logic [2:0] por_q;
  logic rst_n;
  always_ff @(posedge clk_i) if (por_q != '1) por_q <= por_q + 1'b1;
  assign rst_n = rst_ni && por_q == '1;
  localparam int BusBytes = Bus / 8;
  localparam int RegAddrWidth = tessera_host_pkg::RegAddrWidth;
  localparam int WordAddrWidth = $clog2(MemBytes / BusBytes);

  // ------------------------------------------------------------ UART
  logic [7:0] rx_data, tx_data;
  logic rx_valid, rx_frame_error, tx_valid, tx_ready;

  tessera_uart_rx #(.ClksPerBit(ClksPerBit)) u_uart_rx (
    .clk_i, .rst_ni(rst_n), .rx_i(uart_rx_i), .data_o(rx_data), .valid_o(rx_valid), .frame_error_o(rx_frame_error)
  );
  tessera_uart_tx #(.ClksPerBit(ClksPerBit)) u_uart_tx (
    .clk_i, .rst_ni(rst_n), .data_i(tx_data), .valid_i(tx_valid), .ready_o(tx_ready), .tx_o(uart_tx_o)
  );

  // ------------------------------------------------------------ host link
  logic [RegAddrWidth-1:0] axil_awaddr, axil_araddr;
  logic axil_awvalid, axil_awready, axil_wvalid, axil_wready, axil_bvalid, axil_bready;
  logic axil_arvalid, axil_arready, axil_rvalid, axil_rready;
  logic [31:0] axil_wdata, axil_rdata;
  logic [3:0] axil_wstrb;
  logic [1:0] axil_bresp, axil_rresp;
  logic mem_req, mem_we, mem_gnt, mem_rvalid;
  logic [WordAddrWidth-1:0] mem_addr;
  logic [Bus-1:0] mem_wdata, mem_rdata;
  logic [BusBytes-1:0] mem_be;

  tessera_board_link #(
    .MemBytes(MemBytes), .BusWidth(Bus), .RegAddrWidth(RegAddrWidth), .MaxBlock(MaxBlock),
    .IdleTimeoutCycles(IdleTimeoutBits * ClksPerBit)
  ) u_link (
    .clk_i, .rst_ni(rst_n),
    .rx_data_i(rx_data), .rx_valid_i(rx_valid), .rx_frame_error_i(rx_frame_error),
    .tx_data_o(tx_data), .tx_valid_o(tx_valid), .tx_ready_i(tx_ready), .irq_i(irq_o),
    .m_axil_awaddr_o(axil_awaddr), .m_axil_awvalid_o(axil_awvalid), .m_axil_awready_i(axil_awready),
    .m_axil_wdata_o(axil_wdata), .m_axil_wstrb_o(axil_wstrb), .m_axil_wvalid_o(axil_wvalid),
    .m_axil_wready_i(axil_wready), .m_axil_bresp_i(axil_bresp), .m_axil_bvalid_i(axil_bvalid),
    .m_axil_bready_o(axil_bready), .m_axil_araddr_o(axil_araddr), .m_axil_arvalid_o(axil_arvalid),
    .m_axil_arready_i(axil_arready), .m_axil_rdata_i(axil_rdata), .m_axil_rresp_i(axil_rresp),
    .m_axil_rvalid_i(axil_rvalid), .m_axil_rready_o(axil_rready),
    .mem_req_o(mem_req), .mem_we_o(mem_we), .mem_addr_o(mem_addr), .mem_wdata_o(mem_wdata),
    .mem_be_o(mem_be), .mem_gnt_i(mem_gnt), .mem_rvalid_i(mem_rvalid), .mem_rdata_i(mem_rdata)
  );

  // ------------------------------------------------------------ accelerator and its memory
  logic [31:0] dram_araddr, dram_awaddr;
  logic [7:0] dram_arlen, dram_awlen;
  logic dram_arvalid, dram_arready, dram_rlast, dram_rvalid, dram_rready;
  logic dram_awvalid, dram_awready, dram_wlast, dram_wvalid, dram_wready, dram_bvalid, dram_bready;
  logic [Bus-1:0] dram_rdata, dram_wdata;
  logic [BusBytes-1:0] dram_wstrb;
  logic [1:0] dram_rresp, dram_bresp;

  // The board memory serves the single-beat, full-width INCR bursts the pico core issues.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_pico #(.DramAddrWidth($clog2(MemBytes))) u_accel (
    .clk_i, .rst_ni(rst_n),
    .s_axil_awaddr_i(axil_awaddr), .s_axil_awvalid_i(axil_awvalid), .s_axil_awready_o(axil_awready),
    .s_axil_wdata_i(axil_wdata), .s_axil_wstrb_i(axil_wstrb), .s_axil_wvalid_i(axil_wvalid),
    .s_axil_wready_o(axil_wready), .s_axil_bresp_o(axil_bresp), .s_axil_bvalid_o(axil_bvalid),
    .s_axil_bready_i(axil_bready), .s_axil_araddr_i(axil_araddr), .s_axil_arvalid_i(axil_arvalid),
    .s_axil_arready_o(axil_arready), .s_axil_rdata_o(axil_rdata), .s_axil_rresp_o(axil_rresp),
    .s_axil_rvalid_o(axil_rvalid), .s_axil_rready_i(axil_rready),
    .m_axi_araddr_o(dram_araddr), .m_axi_arlen_o(dram_arlen), .m_axi_arsize_o(), .m_axi_arburst_o(),
    .m_axi_arvalid_o(dram_arvalid), .m_axi_arready_i(dram_arready), .m_axi_rdata_i(dram_rdata),
    .m_axi_rresp_i(dram_rresp), .m_axi_rlast_i(dram_rlast), .m_axi_rvalid_i(dram_rvalid),
    .m_axi_rready_o(dram_rready), .m_axi_awaddr_o(dram_awaddr), .m_axi_awlen_o(dram_awlen),
    .m_axi_awsize_o(), .m_axi_awburst_o(), .m_axi_awvalid_o(dram_awvalid), .m_axi_awready_i(dram_awready),
    .m_axi_wdata_o(dram_wdata), .m_axi_wstrb_o(dram_wstrb), .m_axi_wlast_o(dram_wlast),
    .m_axi_wvalid_o(dram_wvalid), .m_axi_wready_i(dram_wready), .m_axi_bresp_i(dram_bresp),
    .m_axi_bvalid_i(dram_bvalid), .m_axi_bready_o(dram_bready), .irq_o
  );
  /* verilator lint_on PINCONNECTEMPTY */

  tessera_board_mem #(.MemBytes(MemBytes), .BusWidth(Bus)) u_mem (
    .clk_i, .rst_ni(rst_n),
    .s_axi_araddr_i(dram_araddr), .s_axi_arlen_i(dram_arlen), .s_axi_arvalid_i(dram_arvalid),
    .s_axi_arready_o(dram_arready), .s_axi_rdata_o(dram_rdata), .s_axi_rresp_o(dram_rresp),
    .s_axi_rlast_o(dram_rlast), .s_axi_rvalid_o(dram_rvalid), .s_axi_rready_i(dram_rready),
    .s_axi_awaddr_i(dram_awaddr), .s_axi_awlen_i(dram_awlen), .s_axi_awvalid_i(dram_awvalid),
    .s_axi_awready_o(dram_awready), .s_axi_wdata_i(dram_wdata), .s_axi_wstrb_i(dram_wstrb),
    .s_axi_wlast_i(dram_wlast), .s_axi_wvalid_i(dram_wvalid), .s_axi_wready_o(dram_wready),
    .s_axi_bresp_o(dram_bresp), .s_axi_bvalid_o(dram_bvalid), .s_axi_bready_i(dram_bready),
    .req_i(mem_req), .we_i(mem_we), .addr_i(mem_addr), .wdata_i(mem_wdata), .be_i(mem_be),
    .gnt_o(mem_gnt), .rvalid_o(mem_rvalid), .rdata_o(mem_rdata)
  );

endmodule
