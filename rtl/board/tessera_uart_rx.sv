// UART receiver, 8N1: samples each bit in its middle and hands over every byte whose stop bit is high.
module tessera_uart_rx #(
  // Clock cycles per bit: the clock frequency divided by the baud rate.
  parameter int ClksPerBit = 104
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       rx_i,
  output logic [7:0] data_o,
  output logic       valid_o,
  // A byte whose stop bit was low (a break or a baud-rate mismatch); the byte is dropped.
  output logic       frame_error_o
);

  localparam int DataBits = 8;
  // Long enough to wait one and a half bits, from the start bit's edge to the first data bit's middle.
  localparam int CntWidth = $clog2(ClksPerBit + ClksPerBit / 2 + 1);
  localparam logic [CntWidth-1:0] FullBit = CntWidth'(ClksPerBit - 1);
  localparam logic [CntWidth-1:0] HalfBit = CntWidth'(ClksPerBit / 2 - 1);

  typedef enum logic [1:0] {StIdle, StStart, StData, StStop} state_e;

  // The line is asynchronous to the clock: two flops before any decision on it.
  logic rx_meta_q, rx_sync_q;
  state_e state_q, state_d;
  logic [CntWidth-1:0] cnt_q, cnt_d;
  logic [2:0] bit_q, bit_d;
  logic [DataBits-1:0] shift_q, shift_d;
  logic valid_q, valid_d, frame_error_q, frame_error_d;

  always_comb begin
    state_d = state_q;
    cnt_d = cnt_q;
    bit_d = bit_q;
    shift_d = shift_q;
    valid_d = 1'b0;
    frame_error_d = 1'b0;
    unique case (state_q)
      StIdle: begin
        if (!rx_sync_q) begin
          state_d = StStart;
          cnt_d = HalfBit;
        end
      end
      StStart: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - 1'b1;
        end else if (rx_sync_q) begin
          // A glitch, not a start bit: it did not last half a bit.
          state_d = StIdle;
        end else begin
          state_d = StData;
          cnt_d = FullBit;
          bit_d = '0;
        end
      end
      StData: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - 1'b1;
        end else begin
          shift_d = {rx_sync_q, shift_q[DataBits-1:1]};
          cnt_d = FullBit;
          bit_d = bit_q + 1'b1;
          if (bit_q == 3'(DataBits - 1)) state_d = StStop;
        end
      end
      StStop: begin
        if (cnt_q != '0) begin
          cnt_d = cnt_q - 1'b1;
        end else begin
          state_d = StIdle;
          valid_d = rx_sync_q;
          frame_error_d = !rx_sync_q;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rx_meta_q     <= 1'b1;
      rx_sync_q     <= 1'b1;
      state_q       <= StIdle;
      cnt_q         <= '0;
      bit_q         <= '0;
      shift_q       <= '0;
      valid_q       <= 1'b0;
      frame_error_q <= 1'b0;
    end else begin
      rx_meta_q     <= rx_i;
      rx_sync_q     <= rx_meta_q;
      state_q       <= state_d;
      cnt_q         <= cnt_d;
      bit_q         <= bit_d;
      shift_q       <= shift_d;
      valid_q       <= valid_d;
      frame_error_q <= frame_error_d;
    end
  end

  assign data_o = shift_q;
  assign valid_o = valid_q;
  assign frame_error_o = frame_error_q;

endmodule
