// The pico accelerator: VTA's ISA on one sequential executor small enough for an iCE40 UP5K, with
// tessera_top's host registers (AXI4-Lite slave, same map) and an AXI4 master to DRAM.
`include "tessera_config.svh"

module tessera_pico #(
  // Byte-address bits of the memory behind the AXI master (tessera_pico_core); addresses at or
  // past 2^DramAddrWidth must be refused by it with an error response.
  parameter int DramAddrWidth = 31
) (
  input  logic                                       clk_i,
  input  logic                                       rst_ni,
  // AXI4-Lite host slave (tessera_pico_regs: tessera_top's register map, docs/rtl.md).
  input  logic [tessera_host_pkg::RegAddrWidth-1:0]  s_axil_awaddr_i,
  input  logic                                       s_axil_awvalid_i,
  output logic                                       s_axil_awready_o,
  input  logic [31:0]                                s_axil_wdata_i,
  input  logic [3:0]                                 s_axil_wstrb_i,
  input  logic                                       s_axil_wvalid_i,
  output logic                                       s_axil_wready_o,
  output logic [1:0]                                 s_axil_bresp_o,
  output logic                                       s_axil_bvalid_o,
  input  logic                                       s_axil_bready_i,
  input  logic [tessera_host_pkg::RegAddrWidth-1:0]  s_axil_araddr_i,
  input  logic                                       s_axil_arvalid_i,
  output logic                                       s_axil_arready_o,
  output logic [31:0]                                s_axil_rdata_o,
  output logic [1:0]                                 s_axil_rresp_o,
  output logic                                       s_axil_rvalid_o,
  input  logic                                       s_axil_rready_i,
  // AXI4 master to DRAM: single-beat bursts, one outstanding.
  output logic [31:0]                                m_axi_araddr_o,
  output logic [7:0]                                 m_axi_arlen_o,
  output logic [2:0]                                 m_axi_arsize_o,
  output logic [1:0]                                 m_axi_arburst_o,
  output logic                                       m_axi_arvalid_o,
  input  logic                                       m_axi_arready_i,
  input  logic [tessera_config_pkg::BUS_WIDTH-1:0]   m_axi_rdata_i,
  input  logic [1:0]                                 m_axi_rresp_i,
  input  logic                                       m_axi_rlast_i,
  input  logic                                       m_axi_rvalid_i,
  output logic                                       m_axi_rready_o,
  output logic [31:0]                                m_axi_awaddr_o,
  output logic [7:0]                                 m_axi_awlen_o,
  output logic [2:0]                                 m_axi_awsize_o,
  output logic [1:0]                                 m_axi_awburst_o,
  output logic                                       m_axi_awvalid_o,
  input  logic                                       m_axi_awready_i,
  output logic [tessera_config_pkg::BUS_WIDTH-1:0]   m_axi_wdata_o,
  output logic [tessera_config_pkg::BUS_WIDTH/8-1:0] m_axi_wstrb_o,
  output logic                                       m_axi_wlast_o,
  output logic                                       m_axi_wvalid_o,
  input  logic                                       m_axi_wready_i,
  input  logic [1:0]                                 m_axi_bresp_i,
  input  logic                                       m_axi_bvalid_i,
  output logic                                       m_axi_bready_o,
  output logic                                       irq_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int NumCounters = tessera_host_pkg::NumCounters;
  localparam int NumModules = tessera_host_pkg::NumModules;
  localparam int StatusBits = tessera_host_pkg::StatusStateBits + tessera_host_pkg::StatusArgBits;
  localparam int NumTokenQueues = tessera_host_pkg::NumTokenQueues;
  localparam int NumInsnQueues = tessera_host_pkg::NumInsnQueues;

`ifndef SYNTHESIS
  // The serial datapath keeps one accumulator lane per bus word and reads int8 inputs, weights
  // and outputs a byte at a time; the micro-op's src field indexes inputs and accumulators alike.
  initial begin
    assert (tessera_config_pkg::ACC_WIDTH == Bus && tessera_config_pkg::INP_WIDTH == 8 &&
            tessera_config_pkg::WGT_WIDTH == 8 && tessera_config_pkg::OUT_WIDTH == 8)
      else $fatal(1, "tessera_pico: needs 32-bit accumulators on a 32-bit bus and 8-bit inputs, weights and outputs");
    assert (tessera_config_pkg::INP_BUFF_DEPTH == tessera_config_pkg::ACC_BUFF_DEPTH)
      else $fatal(1, "tessera_pico: needs equal input and accumulator depths");
  end
`endif

  logic start, finish, fault;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause;
  logic [31:0] fault_insn, fault_info, insn_addr, insn_count;
  logic [NumModules*StatusBits-1:0] status;
  logic [NumModules*32-1:0] insn_idx;
  logic [NumTokenQueues*16-1:0] tokens;
  logic [NumInsnQueues*16-1:0] queues;
  // The core counts its own events (tessera_pico_regs keeps micro-ops and retired instructions).
  logic [NumCounters-1:0] count_inc;

  tessera_pico_regs u_regs (
    .clk_i, .rst_ni,
    .s_axil_awaddr_i, .s_axil_awvalid_i, .s_axil_awready_o, .s_axil_wdata_i, .s_axil_wstrb_i,
    .s_axil_wvalid_i, .s_axil_wready_o, .s_axil_bresp_o, .s_axil_bvalid_o, .s_axil_bready_i,
    .s_axil_araddr_i, .s_axil_arvalid_i, .s_axil_arready_o, .s_axil_rdata_o, .s_axil_rresp_o,
    .s_axil_rvalid_o, .s_axil_rready_i,
    .start_o(start), .insn_addr_o(insn_addr), .insn_count_o(insn_count),
    .finish_i(finish), .fault_i(fault), .fault_cause_i(fault_cause), .fault_insn_i(fault_insn),
    .fault_info_i(fault_info),
    .status_i(status), .insn_i(insn_idx), .tokens_i(tokens), .queues_i(queues),
    .count_inc_i(count_inc), .irq_o
  );

  logic mem_req, mem_we, mem_done, mem_error;
  logic [31:0] mem_addr;
  logic [Bus-1:0] mem_wdata, mem_rdata;

  tessera_pico_core #(.DramAddrWidth(DramAddrWidth)) u_core (
    .clk_i, .rst_ni,
    .start_i(start), .insn_addr_i(insn_addr), .insn_count_i(insn_count),
    .finish_o(finish), .fault_o(fault), .fault_cause_o(fault_cause), .fault_insn_o(fault_insn),
    .fault_info_o(fault_info),
    .status_o(status), .insn_o(insn_idx), .tokens_o(tokens), .queues_o(queues), .count_inc_o(count_inc),
    .mem_req_o(mem_req), .mem_we_o(mem_we), .mem_addr_o(mem_addr), .mem_wdata_o(mem_wdata),
    .mem_done_i(mem_done), .mem_error_i(mem_error), .mem_rdata_i(mem_rdata)
  );

  tessera_pico_dram #(.BusWidth(Bus)) u_dram (
    .clk_i, .rst_ni,
    .req_i(mem_req), .we_i(mem_we), .addr_i(mem_addr), .wdata_i(mem_wdata),
    .done_o(mem_done), .error_o(mem_error), .rdata_o(mem_rdata),
    .m_axi_araddr_o, .m_axi_arlen_o, .m_axi_arsize_o, .m_axi_arburst_o, .m_axi_arvalid_o, .m_axi_arready_i,
    .m_axi_rdata_i, .m_axi_rresp_i, .m_axi_rlast_i, .m_axi_rvalid_i, .m_axi_rready_o,
    .m_axi_awaddr_o, .m_axi_awlen_o, .m_axi_awsize_o, .m_axi_awburst_o, .m_axi_awvalid_o, .m_axi_awready_i,
    .m_axi_wdata_o, .m_axi_wstrb_o, .m_axi_wlast_o, .m_axi_wvalid_o, .m_axi_wready_i,
    .m_axi_bresp_i, .m_axi_bvalid_i, .m_axi_bready_o
  );


endmodule
