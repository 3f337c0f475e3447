// The board memory's RAM: one port, a registered read, a write enable per byte: the shape of the
// iCE40 UP5K's SPRAMs. The bitstream flow defines TESSERA_ICE40_SPRAM and gets SB_SPRAM256KA
// instances (Yosys 0.23 does not infer them: it maps the model to 256 EBRs); everything else
// (Verilator, the generic synthesis checks) uses the model, which reads and writes as they do.
module tessera_board_spram #(
  parameter int Words = 32768,
  parameter int BusWidth = 32,
  localparam int BusBytes = BusWidth / 8,
  localparam int AddrWidth = $clog2(Words)
) (
  input  logic                 clk_i,
  input  logic [BusBytes-1:0]  we_i,
  input  logic                 re_i,
  input  logic [AddrWidth-1:0] addr_i,
  input  logic [BusWidth-1:0]  wdata_i,
  output logic [BusWidth-1:0]  rdata_o
);

`ifdef TESSERA_ICE40_SPRAM
  // Banks of 16K words, each as wide as the bus from 16-bit SPRAMs; a byte's write enable is the
  // mask of its two nibbles. An SPRAM not selected keeps its output, as the model's does.
  localparam int SpramWords = 16384;
  localparam int Banks = Words / SpramWords;
  localparam int Halves = BusWidth / 16;
  localparam int BankBits = (Banks > 1) ? $clog2(Banks) : 1;
  logic [BankBits-1:0] bank, read_bank_q;
  assign bank = (Banks > 1) ? BankBits'(addr_i >> $clog2(SpramWords)) : '0;
  always_ff @(posedge clk_i) if (re_i) read_bank_q <= bank;
  logic [Banks*BusWidth-1:0] bank_rdata;
  for (genvar k = 0; k < Banks; k++) begin : g_bank
    logic selected;
    assign selected = bank == BankBits'(k) && (re_i || we_i != '0);
    for (genvar h = 0; h < Halves; h++) begin : g_half
      SB_SPRAM256KA u_spram (
        .ADDRESS(addr_i[$clog2(SpramWords)-1:0]), .DATAIN(wdata_i[h * 16 +: 16]),
        .MASKWREN({we_i[2 * h + 1], we_i[2 * h + 1], we_i[2 * h], we_i[2 * h]}),
        .WREN(we_i != '0), .CHIPSELECT(selected), .CLOCK(clk_i), .STANDBY(1'b0), .SLEEP(1'b0),
        .POWEROFF(1'b1), .DATAOUT(bank_rdata[k * BusWidth + h * 16 +: 16])
      );
    end
  end
  always_comb begin
    rdata_o = '0;
    for (int k = 0; k < Banks; k++)
      if (read_bank_q == BankBits'(k)) rdata_o = bank_rdata[k * BusWidth +: BusWidth];
  end
`else
  logic [BusWidth-1:0] mem_q [Words];

  always_ff @(posedge clk_i) begin
    for (int b = 0; b < BusBytes; b++)
      if (we_i[b]) mem_q[addr_i][b * 8 +: 8] <= wdata_i[b * 8 +: 8];
    if (re_i) rdata_o <= mem_q[addr_i];
  end
`endif

endmodule
