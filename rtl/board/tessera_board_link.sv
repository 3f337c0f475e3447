// Host-link protocol engine (docs/fpga.md, "iCEBreaker host link"): decodes request frames from the
// UART and answers each with a status byte, reading and writing the accelerator's registers as an
// AXI4-Lite master and the board memory through its host port.
`include "tessera_config.svh"

module tessera_board_link #(
  parameter int MemBytes = 131072,
  parameter int BusWidth = 32,
  parameter int RegAddrWidth = 12,
  // Largest READ_MEM/WRITE_MEM block in bytes (a power of two).
  parameter int MaxBlock = 256,
  // A partial frame is dropped, and the drain after an error ends, once the line has been quiet
  // this many cycles (docs/fpga.md: the host's resync rule).
  parameter int IdleTimeoutCycles = 6656,
  parameter logic [7:0] Version = 8'd1,
  localparam int BusBytes = BusWidth / 8,
  localparam int WordAddrWidth = $clog2(MemBytes / BusBytes)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // Bytes from and to the UART.
  input  logic [7:0]               rx_data_i,
  input  logic                     rx_valid_i,
  input  logic                     rx_frame_error_i,
  output logic [7:0]               tx_data_o,
  output logic                     tx_valid_o,
  input  logic                     tx_ready_i,
  input  logic                     irq_i,
  // AXI4-Lite master, to the accelerator's host registers.
  output logic [RegAddrWidth-1:0]  m_axil_awaddr_o,
  output logic                     m_axil_awvalid_o,
  input  logic                     m_axil_awready_i,
  output logic [31:0]              m_axil_wdata_o,
  output logic [3:0]               m_axil_wstrb_o,
  output logic                     m_axil_wvalid_o,
  input  logic                     m_axil_wready_i,
  input  logic [1:0]               m_axil_bresp_i,
  input  logic                     m_axil_bvalid_i,
  output logic                     m_axil_bready_o,
  output logic [RegAddrWidth-1:0]  m_axil_araddr_o,
  output logic                     m_axil_arvalid_o,
  input  logic                     m_axil_arready_i,
  input  logic [31:0]              m_axil_rdata_i,
  input  logic [1:0]               m_axil_rresp_i,
  input  logic                     m_axil_rvalid_i,
  output logic                     m_axil_rready_o,
  // Board memory host port (tessera_board_mem).
  output logic                     mem_req_o,
  output logic                     mem_we_o,
  output logic [WordAddrWidth-1:0] mem_addr_o,
  output logic [BusWidth-1:0]      mem_wdata_o,
  output logic [BusBytes-1:0]      mem_be_o,
  input  logic                     mem_gnt_i,
  input  logic                     mem_rvalid_i,
  input  logic [BusWidth-1:0]      mem_rdata_i
);

  // Frame bytes and codes (docs/fpga.md).
  localparam logic [7:0] RequestSync = 8'hA5;
  localparam logic [7:0] ReplySync = 8'h5A;
  localparam logic [7:0] CmdHello = 8'h01;
  localparam logic [7:0] CmdReadReg = 8'h02;
  localparam logic [7:0] CmdWriteReg = 8'h03;
  localparam logic [7:0] CmdReadMem = 8'h04;
  localparam logic [7:0] CmdWriteMem = 8'h05;
  localparam logic [7:0] CmdStatus = 8'h06;
  localparam logic [7:0] StatusOk = 8'h00;
  localparam logic [7:0] StatusBadCommand = 8'h01;
  localparam logic [7:0] StatusBadLength = 8'h02;
  localparam logic [7:0] StatusBadAddress = 8'h03;
  localparam logic [7:0] StatusBusError = 8'h04;
  // After the sync byte: command, 32-bit address and 16-bit length, little-endian.
  localparam int HeaderBytes = 7;
  localparam int HeaderBits = HeaderBytes * 8;
  localparam int HelloBytes = 4;
  localparam int StatusBytes = 2;
  localparam int RegBytes = 4;
  localparam int ByteOffsetBits = $clog2(BusBytes);
  localparam int IdleWidth = $clog2(IdleTimeoutCycles + 1);
  localparam logic [IdleWidth-1:0] IdleLimit = IdleWidth'(IdleTimeoutCycles);
  localparam logic [32:0] MemLimit = 33'(MemBytes);
  localparam logic [31:0] RegLimit = 32'(1) << RegAddrWidth;

  typedef enum logic [3:0] {
    StHunt, StHeader, StCheck, StRecvReg, StRecvMem, StMemWrite, StAxiWrite, StAxiWriteResp,
    StAxiRead, StAxiReadResp, StReplyLoad, StMemRead, StMemReadWait, StReplySend, StDrain
  } state_e;

  state_e state_q, state_d;
  logic [HeaderBits-1:0] header_q, header_d;
  logic [2:0] header_count_q, header_count_d;
  logic [IdleWidth-1:0] idle_q, idle_d;
  logic [31:0] ptr_q, ptr_d;            // the next memory byte, or the register offset
  logic [16:0] remaining_q, remaining_d;  // payload bytes still to receive or to send
  logic [31:0] data_q, data_d;          // a register word, or a reply's short payload
  logic [7:0] status_q, status_d;
  logic [7:0] tx_byte_q, tx_byte_d;
  logic [1:0] reply_idx_q, reply_idx_d;  // 0: sync, 1: status, 2: payload
  logic [2:0] short_idx_q, short_idx_d;  // byte of data_q being sent
  logic drain_after_q, drain_after_d;
  logic aw_done_q, aw_done_d, w_done_q, w_done_d;
  logic frame_error_seen_q, frame_error_seen_d, overrun_seen_q, overrun_seen_d;
  logic [7:0] errors_q, errors_d;

  logic [7:0] cmd;
  logic [31:0] addr;
  logic [15:0] len;
  logic [32:0] mem_end;
  logic rx_expected;
  logic [BusBytes-1:0] lane;

  assign cmd = header_q[7:0];
  assign addr = header_q[39:8];
  assign len = header_q[55:40];
  assign mem_end = {1'b0, addr} + 33'(len);
  assign lane = BusBytes'(1) << ptr_q[ByteOffsetBits-1:0];
  assign rx_expected = state_q == StHunt || state_q == StHeader || state_q == StRecvReg ||
                       state_q == StRecvMem || state_q == StDrain;

  // The error count saturates rather than wrapping to zero.
  logic [7:0] errors_inc;
  assign errors_inc = errors_q == 8'hFF ? errors_q : errors_q + 8'd1;

  // What a header asks for is refused: command, then length, then address.
  logic [7:0] header_status;
  always_comb begin
    header_status = StatusBadCommand;
    if (cmd == CmdHello || cmd == CmdStatus) begin
      header_status = len == '0 ? StatusOk : StatusBadLength;
    end else if (cmd == CmdReadReg || cmd == CmdWriteReg) begin
      if (len != 16'(RegBytes)) header_status = StatusBadLength;
      else if (addr < RegLimit && addr[1:0] == 2'b00) header_status = StatusOk;
      else header_status = StatusBadAddress;
    end else if (cmd == CmdReadMem || cmd == CmdWriteMem) begin
      if (len == '0 || 32'(len) > 32'(MaxBlock)) header_status = StatusBadLength;
      else if (mem_end <= MemLimit) header_status = StatusOk;
      else header_status = StatusBadAddress;
    end
  end

  always_comb begin
    state_d = state_q;
    header_d = header_q;
    header_count_d = header_count_q;
    idle_d = rx_valid_i ? '0 : (idle_q == IdleLimit ? idle_q : idle_q + 1'b1);
    ptr_d = ptr_q;
    remaining_d = remaining_q;
    data_d = data_q;
    status_d = status_q;
    tx_byte_d = tx_byte_q;
    reply_idx_d = reply_idx_q;
    short_idx_d = short_idx_q;
    drain_after_d = drain_after_q;
    aw_done_d = aw_done_q;
    w_done_d = w_done_q;
    frame_error_seen_d = frame_error_seen_q | rx_frame_error_i;
    overrun_seen_d = overrun_seen_q | (rx_valid_i && !rx_expected);
    errors_d = errors_q;
    tx_valid_o = 1'b0;
    m_axil_awvalid_o = 1'b0;
    m_axil_wvalid_o = 1'b0;
    m_axil_bready_o = 1'b0;
    m_axil_arvalid_o = 1'b0;
    m_axil_rready_o = 1'b0;
    unique case (state_q)
      StHunt: begin
        // Anything before a request's sync byte is dropped: the first half of the resync rule.
        if (rx_valid_i && rx_data_i == RequestSync) begin
          header_count_d = '0;
          state_d = StHeader;
        end
      end
      StHeader: begin
        if (rx_valid_i) begin
          header_d = {rx_data_i, header_q[HeaderBits-1:8]};
          header_count_d = header_count_q + 1'b1;
          if (header_count_q == 3'(HeaderBytes - 1)) state_d = StCheck;
        end else if (idle_q == IdleLimit) begin
          errors_d = errors_inc;
          state_d = StHunt;
        end
      end
      StCheck: begin
        status_d = header_status;
        ptr_d = addr;
        reply_idx_d = '0;
        short_idx_d = '0;
        drain_after_d = 1'b0;
        data_d = '0;
        remaining_d = '0;
        state_d = StReplyLoad;
        if (status_d != StatusOk) begin
          // The rest of a refused frame (a write's payload) must not be read as requests.
          errors_d = errors_inc;
          drain_after_d = 1'b1;
        end else begin
          unique case (cmd)
            CmdHello: begin
              data_d = {8'(RegAddrWidth), 8'($clog2(MaxBlock)), 8'($clog2(MemBytes)), Version};
              remaining_d = 17'(HelloBytes);
            end
            CmdStatus: begin
              data_d = {16'b0, errors_q, 5'b0, overrun_seen_q, frame_error_seen_q, irq_i};
              remaining_d = 17'(StatusBytes);
              // Reading the status clears what it reports.
              errors_d = '0;
              frame_error_seen_d = rx_frame_error_i;
              overrun_seen_d = 1'b0;
            end
            CmdReadReg: begin
              state_d = StAxiRead;
            end
            CmdWriteReg: begin
              remaining_d = 17'(RegBytes);
              state_d = StRecvReg;
            end
            CmdReadMem: begin
              remaining_d = 17'(len);
            end
            default: begin  // CmdWriteMem
              remaining_d = 17'(len);
              state_d = StRecvMem;
            end
          endcase
        end
      end
      StRecvReg: begin
        if (rx_valid_i) begin
          data_d = {rx_data_i, data_q[31:8]};
          remaining_d = remaining_q - 1'b1;
          if (remaining_q == 17'd1) begin
            aw_done_d = 1'b0;
            w_done_d = 1'b0;
            state_d = StAxiWrite;
          end
        end else if (idle_q == IdleLimit) begin
          errors_d = errors_inc;
          state_d = StHunt;
        end
      end
      StAxiWrite: begin
        m_axil_awvalid_o = !aw_done_q;
        m_axil_wvalid_o = !w_done_q;
        aw_done_d = aw_done_q | m_axil_awready_i;
        w_done_d = w_done_q | m_axil_wready_i;
        if (aw_done_d && w_done_d) state_d = StAxiWriteResp;
      end
      StAxiWriteResp: begin
        m_axil_bready_o = 1'b1;
        if (m_axil_bvalid_i) begin
          status_d = m_axil_bresp_i == tessera_config_pkg::AXI_RESP_OKAY ? StatusOk : StatusBusError;
          remaining_d = '0;
          state_d = StReplyLoad;
        end
      end
      StAxiRead: begin
        m_axil_arvalid_o = 1'b1;
        if (m_axil_arready_i) state_d = StAxiReadResp;
      end
      StAxiReadResp: begin
        m_axil_rready_o = 1'b1;
        if (m_axil_rvalid_i) begin
          data_d = m_axil_rdata_i;
          status_d = m_axil_rresp_i == tessera_config_pkg::AXI_RESP_OKAY ? StatusOk : StatusBusError;
          remaining_d = m_axil_rresp_i == tessera_config_pkg::AXI_RESP_OKAY ? 17'(RegBytes) : '0;
          state_d = StReplyLoad;
        end
      end
      StRecvMem: begin
        if (rx_valid_i) begin
          tx_byte_d = rx_data_i;  // held for the write; no reply is being sent now
          state_d = StMemWrite;
        end else if (idle_q == IdleLimit) begin
          errors_d = errors_inc;
          state_d = StHunt;
        end
      end
      StMemWrite: begin
        if (mem_gnt_i) begin
          ptr_d = ptr_q + 1'b1;
          remaining_d = remaining_q - 1'b1;
          state_d = remaining_q == 17'd1 ? StReplyLoad : StRecvMem;
        end
      end
      StReplyLoad: begin
        state_d = StReplySend;
        unique case (reply_idx_q)
          2'd0: tx_byte_d = ReplySync;
          2'd1: tx_byte_d = status_q;
          default: begin
            if (cmd == CmdReadMem) state_d = StMemRead;
            else tx_byte_d = data_q[8 * short_idx_q +: 8];
          end
        endcase
      end
      StMemRead: begin
        if (mem_gnt_i) state_d = StMemReadWait;
      end
      StMemReadWait: begin
        if (mem_rvalid_i) begin
          tx_byte_d = mem_rdata_i[8 * ptr_q[ByteOffsetBits-1:0] +: 8];
          ptr_d = ptr_q + 1'b1;
          state_d = StReplySend;
        end
      end
      StReplySend: begin
        tx_valid_o = 1'b1;
        if (tx_ready_i) begin
          state_d = StReplyLoad;
          if (reply_idx_q != 2'd2) begin
            reply_idx_d = reply_idx_q + 1'b1;
            if (reply_idx_q == 2'd1 && remaining_q == '0) state_d = drain_after_q ? StDrain : StHunt;
          end else begin
            short_idx_d = short_idx_q + 1'b1;
            remaining_d = remaining_q - 1'b1;
            if (remaining_q == 17'd1) state_d = StHunt;
          end
        end
      end
      StDrain: begin
        if (idle_q == IdleLimit) state_d = StHunt;
      end
      default: state_d = StHunt;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q            <= StHunt;
      header_q           <= '0;
      header_count_q     <= '0;
      idle_q             <= '0;
      ptr_q              <= '0;
      remaining_q        <= '0;
      data_q             <= '0;
      status_q           <= StatusOk;
      tx_byte_q          <= '0;
      reply_idx_q        <= '0;
      short_idx_q        <= '0;
      drain_after_q      <= 1'b0;
      aw_done_q          <= 1'b0;
      w_done_q           <= 1'b0;
      frame_error_seen_q <= 1'b0;
      overrun_seen_q     <= 1'b0;
      errors_q           <= '0;
    end else begin
      state_q            <= state_d;
      header_q           <= header_d;
      header_count_q     <= header_count_d;
      idle_q             <= idle_d;
      ptr_q              <= ptr_d;
      remaining_q        <= remaining_d;
      data_q             <= data_d;
      status_q           <= status_d;
      tx_byte_q          <= tx_byte_d;
      reply_idx_q        <= reply_idx_d;
      short_idx_q        <= short_idx_d;
      drain_after_q      <= drain_after_d;
      aw_done_q          <= aw_done_d;
      w_done_q           <= w_done_d;
      frame_error_seen_q <= frame_error_seen_d;
      overrun_seen_q     <= overrun_seen_d;
      errors_q           <= errors_d;
    end
  end

  // From the state alone, outside the block that reads the grant: the memory's grant depends on
  // the request combinationally.
  assign mem_req_o = state_q == StMemWrite || state_q == StMemRead;
  assign mem_we_o = state_q == StMemWrite;
  assign tx_data_o = tx_byte_q;
  assign m_axil_awaddr_o = ptr_q[RegAddrWidth-1:0];
  assign m_axil_araddr_o = ptr_q[RegAddrWidth-1:0];
  assign m_axil_wdata_o = data_q;
  assign m_axil_wstrb_o = '1;
  assign mem_addr_o = ptr_q[ByteOffsetBits +: WordAddrWidth];
  assign mem_wdata_o = {BusBytes{tx_byte_q}};
  assign mem_be_o = lane;

`ifndef SYNTHESIS
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               state_q inside {StHunt, StHeader, StCheck, StRecvReg, StRecvMem, StMemWrite, StAxiWrite,
                                               StAxiWriteResp, StAxiRead, StAxiReadResp, StReplyLoad, StMemRead,
                                               StMemReadWait, StReplySend, StDrain})
    else $error("tessera_board_link: invalid state %0d", state_q);
`endif

endmodule
