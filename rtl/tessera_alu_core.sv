// The vector ALU: one micro-op's BATCH x BLOCK_OUT int32 lanes per cycle, result registered.
//
// clr_i zeroes the result register instead (a reset GEMM's micro-op, which writes zeros), so the
// result is the row written whatever the micro-op, and a row forwarded from it needs no zero
// select in front of the next micro-op's arithmetic.
//
// The second operand is the immediate (sign-extended by the caller) or the source row. MIN and
// MAX compare signed; ADD and MUL wrap at 32 bits; SHR shifts arithmetically right by the operand
// mod 32, and left by its magnitude mod 32 when the operand is negative.
`include "tessera_config.svh"

module tessera_alu_core (
  input  logic                                 clk_i,
  input  logic                                 en_i,
  input  logic                                 clr_i,
  input  tessera_config_pkg::alu_op_e          op_i,
  input  logic                                 use_imm_i,
  input  logic [31:0]                          imm_i,
  input  logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] a_i,
  input  logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] b_i,
  output logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] y_o
);

  localparam int Lanes = tessera_config_pkg::BATCH * tessera_config_pkg::BLOCK_OUT;
  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;

  // a * b mod 2^32 from two DSP-sized multiplications and one small one in LUTs. With b split at
  // bit 17 and a at bit 24: a * b = a[23:0] * b[16:0] + a[31:24] * b[16:0] * 2^24 + a * b[31:17] * 2^17,
  // and mod 2^32 only the low 8 bits of the second product count (a[31:24] * b[7:0]) and the low 15
  // of the third (a[14:0] * b[31:17]). The first is 24 x 17 bits and the third 15 x 15, one DSP48
  // each (unsigned 24 x 17 is the DSP48E1's signed 25 x 18); the second, 8 x 8 bits kept to 8, is
  // below the DSP threshold and takes a few LUTs. A straight 32 x 32 multiplication maps to three.
  function automatic logic [31:0] mul32(input logic [31:0] a, input logic [31:0] b);
    logic [31:0] p0;
    logic [7:0]  p1;
    logic [14:0] p2;
    p0 = 32'(a[23:0] * b[16:0]);
    p1 = 8'(a[31:24] * b[7:0]);
    p2 = 15'(a[14:0] * b[31:17]);
    mul32 = p0 + {p1, 24'b0} + {p2, 17'b0};
  endfunction

  // The multiply is the deepest operation, so it meets the others in one last two-way choice
  // rather than as one arm of a five-way multiplexer (one LUT level less behind it).
  function automatic logic [31:0] lane_other(input tessera_config_pkg::alu_op_e op, input logic [31:0] a,
                                             input logic [31:0] b);
    logic [4:0] left;
    left = 5'(-b);
    case (op)
      tessera_config_pkg::ALU_OPCODE_MIN: lane_other = ($signed(a) < $signed(b)) ? a : b;
      tessera_config_pkg::ALU_OPCODE_MAX: lane_other = ($signed(a) < $signed(b)) ? b : a;
      tessera_config_pkg::ALU_OPCODE_ADD: lane_other = a + b;
      default: lane_other = b[31] ? (a << left) : 32'($signed(a) >>> b[4:0]);  // ALU_OPCODE_SHR
    endcase
  endfunction

  function automatic logic [31:0] lane_op(input tessera_config_pkg::alu_op_e op, input logic [31:0] a,
                                          input logic [31:0] b);
    if (op == tessera_config_pkg::ALU_OPCODE_MIN || op == tessera_config_pkg::ALU_OPCODE_MAX ||
        op == tessera_config_pkg::ALU_OPCODE_ADD || op == tessera_config_pkg::ALU_OPCODE_SHR)
      lane_op = lane_other(op, a, b);
    else lane_op = mul32(a, b);
  endfunction

  function automatic logic [AccWidth-1:0] apply(input tessera_config_pkg::alu_op_e op, input logic use_imm, input logic [31:0] imm,
                                                input logic [AccWidth-1:0] a, input logic [AccWidth-1:0] b);
    for (int l = 0; l < Lanes; l++) apply[l * 32 +: 32] = lane_op(op, a[l * 32 +: 32], use_imm ? imm : b[l * 32 +: 32]);
  endfunction

  always_ff @(posedge clk_i) begin
    if (clr_i) y_o <= '0;
    else if (en_i) y_o <= apply(op_i, use_imm_i, imm_i, a_i, b_i);
  end

endmodule
