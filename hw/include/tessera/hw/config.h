// Hardware configuration: the JSON keys of hw/configs/*.json and every parameter derived from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::hw {

// Memory identifiers of LOAD/STORE instructions (VTA's VTA_MEM_ID_*).
enum class MemId : uint32_t { kUop = 0, kWgt = 1, kInp = 2, kAcc = 3, kOut = 4, kAcc8 = 5 };

// One hardware configuration. Construct with Config::fromJson / Config::load; all derived values are
// computed once by derive() and never restated elsewhere.
struct Config {
  // --- Keys of the JSON file ---
  std::string name;         // NAME (defaults to the file stem)
  std::string description;  // DESCRIPTION (optional)
  int logInpWidth = 3;      // LOG_INP_WIDTH
  int logWgtWidth = 3;      // LOG_WGT_WIDTH
  int logAccWidth = 5;      // LOG_ACC_WIDTH
  int logBatch = 0;         // LOG_BATCH
  int logBlockIn = 4;       // LOG_BLOCK_IN (or LOG_BLOCK)
  int logBlockOut = 4;      // LOG_BLOCK_OUT (or LOG_BLOCK)
  int logUopBuffSize = 15;  // LOG_UOP_BUFF_SIZE, bytes
  int logInpBuffSize = 15;  // LOG_INP_BUFF_SIZE
  int logWgtBuffSize = 18;  // LOG_WGT_BUFF_SIZE
  int logAccBuffSize = 17;  // LOG_ACC_BUFF_SIZE
  int logBusWidth = 6;      // LOG_BUS_WIDTH, bits
  int insnQueueDepth = 512; // INSN_QUEUE_DEPTH: entries of each fetch->stage instruction queue
  int depQueueDepth = 512;  // DEP_QUEUE_DEPTH: entries of each dependency-token queue

  // --- Derived (filled by derive()) ---
  int logOutWidth = 3;
  int inpWidth = 8, wgtWidth = 8, accWidth = 32, outWidth = 8;  // bits per scalar
  int batch = 1, blockIn = 16, blockOut = 16;
  int busWidth = 64, busBytes = 8;
  int insnBytes = 16, uopBytes = 4;
  int inpElemBytes = 0, wgtElemBytes = 0, accElemBytes = 0, outElemBytes = 0;
  int acc8ElemBytes = 0;  // DRAM bytes of one ACC_8BIT element (BATCH*BLOCK_OUT int8)
  int inpMatAxiRatio = 0, wgtMatAxiRatio = 0, accMatAxiRatio = 0, outMatAxiRatio = 0;
  int logUopDepth = 0, logInpDepth = 0, logWgtDepth = 0, logAccDepth = 0;
  uint32_t uopDepth = 0, inpDepth = 0, wgtDepth = 0, accDepth = 0;

  // Bytes of one element of `id` as laid out in DRAM (VTA's GetElemBytes).
  int dramElemBytes(MemId id) const;
  // Number of SRAM entries addressable for `id` (ACC and ACC_8BIT share the accumulator).
  uint32_t sramDepth(MemId id) const;

  // Loads and validates a config; `pathOrName` is a JSON file or the name of a shipped config.
  static Config load(const std::string& pathOrName);
  // The config a simulator was built for by name: shipped, board or a point of the explored space
  // (never a file, whatever the working directory holds). Throws naming it when it is none of these.
  static Config named(const std::string& name);
  // Parses and validates JSON text; `origin` names the source in error messages.
  static Config fromJson(const std::string& text, const std::string& origin);
  // Recomputes derived values and validates; throws tessera::Error naming the key and the reason.
  void derive(const std::string& origin);
  // Canonical JSON of the keys (what the generator and `tessera info` print).
  std::string toJson() const;
  // The field of an integer JSON key (LOG_BATCH, LOG_BUS_WIDTH, ...); nullptr for any other key.
  int* intKey(const std::string& key);
  const int* intKey(const std::string& key) const;
};

// Names of the configs shipped in hw/configs, embedded at build time.
std::vector<std::string> shippedConfigNames();
// JSON text of a shipped config, or empty if there is none of that name.
std::string shippedConfigJson(const std::string& name);
// Names of the board configs (hw/configs/boards: a board bitstream's config, such as the
// iCEBreaker's pico), embedded like the shipped ones and loadable by name, but not in the
// shipped list that tests and models iterate.
std::vector<std::string> boardConfigNames();
// JSON text of a board config, or empty if there is none of that name.
std::string boardConfigJson(const std::string& name);

}  // namespace tessera::hw
