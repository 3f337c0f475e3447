// Lint check of the generated SystemVerilog include: a module sized entirely by its packages.
`include "tessera_config.svh"

module uses_config (
  input  logic                                           clk_i,
  // Only the y_size field is extracted; the rest of the instruction is deliberately unused.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [tessera_config_pkg::INS_WIDTH-1:0]       insn_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic [tessera_config_pkg::INSN_MEM_Y_SIZE_W-1:0] y_size_o,
  output tessera_config_pkg::opcode_e                    opcode_o,
  output logic                                           input_load_o,
  output tessera_host_pkg::status_t                      status_o
);
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t insn;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [tessera_config_pkg::INSN_MEM_Y_SIZE_W-1:0] y_size_q;
  assign insn = insn_i;
  always_ff @(posedge clk_i) begin
    y_size_q <= insn.y_size;
  end
  assign y_size_o = y_size_q;
  // The enum-typed fields: a register of the opcode's type, compared with the package's names.
  tessera_config_pkg::opcode_e opcode_q;
  always_ff @(posedge clk_i) begin
    opcode_q <= insn.opcode;
  end
  assign opcode_o = opcode_q;
  assign input_load_o = insn.opcode == tessera_config_pkg::OPCODE_LOAD &&
                        insn.memory_type == tessera_config_pkg::MEM_ID_INP;
  // The packed struct and the field positions agree.
  assign status_o.arg = '0;
  assign status_o.state = (insn.y_size == insn_i[tessera_config_pkg::INSN_MEM_Y_SIZE_LO +: tessera_config_pkg::INSN_MEM_Y_SIZE_W])
                          ? tessera_host_pkg::StateIdle : tessera_host_pkg::StateBusy;
endmodule
