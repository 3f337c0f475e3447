// The pico core's serial arithmetic: the ALU's 32-bit multiply (shift and add, one multiplier bit
// a cycle) and its shifts (one bit a cycle), so neither costs a LUT multiplier or barrel shifter.
module tessera_pico_serial (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        start_i,
  // 1: a * b (low 32 bits); 0: shift a by b as VTA's SHR does (right if b >= 0, else left by -b).
  input  logic        mul_i,
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  output logic        busy_o,
  output logic [31:0] result_o
);

  typedef enum logic [1:0] {StIdle, StMul, StShiftRight, StShiftLeft} state_e;
  state_e state_q, state_d;
  logic [31:0] x_q, x_d, y_q, y_d, sum_q, sum_d;
  logic [4:0] left_q, left_d;

  always_comb begin
    state_d = state_q;
    x_d = x_q;
    y_d = y_q;
    sum_d = sum_q;
    left_d = left_q;
    unique case (state_q)
      StIdle: begin
        if (start_i) begin
          x_d = a_i;
          y_d = b_i;
          sum_d = '0;
          if (mul_i) begin
            state_d = StMul;
          end else begin
            // The shift amount is b's low five bits, of -b when b is negative.
            left_d = b_i[31] ? 5'(~b_i + 32'd1) : b_i[4:0];
            state_d = b_i[31] ? StShiftLeft : StShiftRight;
          end
        end
      end
      StMul: begin
        if (y_q == '0) begin
          state_d = StIdle;
        end else begin
          if (y_q[0]) sum_d = sum_q + x_q;
          x_d = x_q << 1;
          y_d = y_q >> 1;
        end
      end
      StShiftRight, StShiftLeft: begin
        if (left_q == '0) begin
          state_d = StIdle;
        end else begin
          x_d = state_q == StShiftRight ? {x_q[31], x_q[31:1]} : {x_q[30:0], 1'b0};
          left_d = left_q - 1'b1;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      x_q <= '0;
      y_q <= '0;
      sum_q <= '0;
      left_q <= '0;
    end else begin
      state_q <= state_d;
      x_q <= x_d;
      y_q <= y_d;
      sum_q <= sum_d;
      left_q <= left_d;
    end
  end

  // Busy from the cycle after the start request until the result is ready.
  assign busy_o = state_q != StIdle;
  // A multiply ends with its sum; a shift with the shifted operand.
  logic mul_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) mul_q <= 1'b0;
    else if (start_i && state_q == StIdle) mul_q <= mul_i;
  end
  assign result_o = mul_q ? sum_q : x_q;

endmodule
