// UART transmitter, 8N1: one byte at a time through a valid/ready handshake, least significant bit first.
module tessera_uart_tx #(
  // Clock cycles per bit: the clock frequency divided by the baud rate.
  parameter int ClksPerBit = 104
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic [7:0] data_i,
  input  logic       valid_i,
  output logic       ready_o,
  output logic       tx_o
);

  // Start bit, eight data bits, stop bit, sent from one shift register.
  localparam int FrameBits = 10;
  localparam int CntWidth = $clog2(ClksPerBit + 1);
  localparam logic [CntWidth-1:0] FullBit = CntWidth'(ClksPerBit - 1);

  logic [FrameBits-1:0] frame_q, frame_d;
  logic [3:0] bits_left_q, bits_left_d;
  logic [CntWidth-1:0] cnt_q, cnt_d;
  logic busy;

  assign busy = bits_left_q != '0;
  assign ready_o = !busy;

  always_comb begin
    frame_d = frame_q;
    bits_left_d = bits_left_q;
    cnt_d = cnt_q;
    if (!busy) begin
      if (valid_i) begin
        frame_d = {1'b1, data_i, 1'b0};
        bits_left_d = 4'(FrameBits);
        cnt_d = FullBit;
      end
    end else if (cnt_q != '0) begin
      cnt_d = cnt_q - 1'b1;
    end else begin
      frame_d = {1'b1, frame_q[FrameBits-1:1]};
      bits_left_d = bits_left_q - 1'b1;
      cnt_d = FullBit;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      frame_q     <= '1;
      bits_left_q <= '0;
      cnt_q       <= '0;
    end else begin
      frame_q     <= frame_d;
      bits_left_q <= bits_left_d;
      cnt_q       <= cnt_d;
    end
  end

  // Idle keeps the line high: the frame register shifts in ones behind the stop bit.
  assign tx_o = busy ? frame_q[0] : 1'b1;

endmodule
