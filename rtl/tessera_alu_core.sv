// The vector ALU: one micro-op's BATCH x BLOCK_OUT int32 lanes, combinational.
//
// MIN and MAX compare signed; ADD and MUL wrap at 32 bits; SHR shifts arithmetically right by the
// operand mod 32, and left by its magnitude mod 32 when the operand is negative.
`include "tessera_config.svh"

module tessera_alu_core (
  input  logic [2:0]                           op_i,
  input  logic [`TESSERA_ACC_MATRIX_WIDTH-1:0] a_i,
  input  logic [`TESSERA_ACC_MATRIX_WIDTH-1:0] b_i,
  output logic [`TESSERA_ACC_MATRIX_WIDTH-1:0] y_o
);

  localparam int Lanes = `TESSERA_BATCH * `TESSERA_BLOCK_OUT;
  localparam logic [2:0] OpMin = 3'(`TESSERA_ALU_OPCODE_MIN);
  localparam logic [2:0] OpMax = 3'(`TESSERA_ALU_OPCODE_MAX);
  localparam logic [2:0] OpAdd = 3'(`TESSERA_ALU_OPCODE_ADD);
  localparam logic [2:0] OpShr = 3'(`TESSERA_ALU_OPCODE_SHR);

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic signed [31:0] a, b;
    logic [4:0] left;
    assign a = $signed(a_i[l * 32 +: 32]);
    assign b = $signed(b_i[l * 32 +: 32]);
    assign left = 5'(-b);
    always_comb begin
      case (op_i)
        OpMin: y_o[l * 32 +: 32] = (a < b) ? a : b;
        OpMax: y_o[l * 32 +: 32] = (a < b) ? b : a;
        OpAdd: y_o[l * 32 +: 32] = a + b;
        OpShr: y_o[l * 32 +: 32] = b[31] ? (a << left) : (a >>> b[4:0]);
        default: y_o[l * 32 +: 32] = 32'(a * b);
      endcase
    end
  end

endmodule
