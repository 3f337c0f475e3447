// Sessions for ahead-of-time compiled models: constants and relocated instructions in accelerator memory, segment runs.
#include "tessera/runtime/aot.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/session.h"

struct TesseraAotSession {
  const TesseraAotModel& model;
  std::unique_ptr<tessera::runtime::Session> owned;  // tessera_aot_open's; null on an AotSession
  tessera::runtime::Session& session;
  tessera::runtime::DataBuffer* constants = nullptr;
  tessera::runtime::DataBuffer* arena = nullptr;
  std::vector<tessera::runtime::DataBuffer*> code;
  std::vector<uint8_t> scratch;
  std::string error;
  double segmentMicros = 0;

  TesseraAotSession(const TesseraAotModel& m, std::unique_ptr<tessera::runtime::Session> own, tessera::runtime::Session& s)
      : model(m), owned(std::move(own)), session(s) {}
  ~TesseraAotSession() {
    for (auto* b : code) session.freeBuffer(b);
    if (arena) session.freeBuffer(arena);
    if (constants) session.freeBuffer(constants);
  }

  void load() {
    using tessera::Error;
    const std::string where = std::string("compiled model '") + (model.name ? model.name : "?") + "'";
    if (model.abi_version != TESSERA_AOT_ABI_VERSION)
      throw Error(where, "was generated for AOT ABI version " + std::to_string(model.abi_version) + ", this runtime has " +
                             std::to_string(TESSERA_AOT_ABI_VERSION));
    const tessera::hw::Config& cfg = session.config();
    if (cfg.toJson() != model.config_json)
      throw Error(where, "was compiled for another configuration than the session's (" + cfg.name + ")");
    constants = session.allocBuffer(std::max<uint64_t>(model.constant_bytes, 1));
    arena = session.allocBuffer(std::max<uint64_t>(model.arena_bytes, 1));
    // Zeroed once: the zeros a transposed convolution's zero insertion leaves between its pixels
    // are the arena's (docs/graph.md).
    std::memset(arena->host, 0, arena->size);
    if (model.constant_bytes) std::memcpy(constants->host, model.constants, model.constant_bytes);
    scratch.assign(std::max<uint64_t>(model.scratch_bytes, 1), 0);
    const tessera::hw::Isa isa(cfg);
    for (uint32_t si = 0; si < model.segment_count; ++si) {
      const TesseraAotSegment& s = model.segments[si];
      tessera::runtime::DataBuffer* c = session.allocBuffer(std::max<uint64_t>(s.insn_count, 1) * 16);
      code.push_back(c);
      for (uint32_t i = 0; i < s.insn_count; ++i) {
        tessera::hw::RawInsn raw;
        raw.lo = s.insns[2 * i];
        raw.hi = s.insns[2 * i + 1];
        const std::string at = where + " segment " + std::to_string(si) + " instruction " + std::to_string(i);
        tessera::hw::Insn in = isa.decode(raw);
        isa.validate(in, i);
        // Addresses were compiled relative to their region; the session decides where regions live.
        if (s.regions[i] >= 0) {
          const tessera::runtime::DataBuffer* region = s.regions[i] == 0 ? constants : arena;
          const uint64_t elem = uint64_t(cfg.dramElemBytes(static_cast<tessera::hw::MemId>(in.memType)));
          if (region->phys % elem) throw Error(at, "DRAM region is not aligned to " + std::to_string(elem) + "-byte elements");
          in.dramBase = static_cast<uint32_t>(in.dramBase + region->phys / elem);
        }
        tessera::hw::Isa::rawToBytes(isa.encode(in, at), c->host + 16 * i);
      }
    }
  }
};

namespace {

void copyError(const std::string& message, char* error, size_t size) {
  if (!error || size == 0) return;
  const size_t n = std::min(message.size(), size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" {

TesseraAotSession* tessera_aot_open(const TesseraAotModel* model, const char* target, char* error, size_t error_size) {
  if (!model) {
    copyError("tessera_aot_open: no model", error, error_size);
    return nullptr;
  }
  try {
    const tessera::hw::Config cfg =
        tessera::hw::Config::fromJson(model->config_json, std::string("compiled model '") + model->name + "': config");
    auto owned = std::make_unique<tessera::runtime::Session>(target ? target : "fsim", cfg);
    tessera::runtime::Session& s = *owned;
    auto session = std::make_unique<TesseraAotSession>(*model, std::move(owned), s);
    session->load();
    return session.release();
  } catch (const std::exception& e) {
    copyError(e.what(), error, error_size);
    return nullptr;
  }
}

void tessera_aot_close(TesseraAotSession* session) { delete session; }

const char* tessera_aot_error(const TesseraAotSession* session) { return session ? session->error.c_str() : ""; }

uint8_t* tessera_aot_arena(TesseraAotSession* session) { return session->arena->host; }

uint8_t* tessera_aot_scratch(TesseraAotSession* session) { return session->scratch.data(); }

int tessera_aot_run_segment(TesseraAotSession* session, uint32_t segment) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    if (segment >= session->model.segment_count)
      throw tessera::Error(std::string("compiled model '") + session->model.name + "'",
                           "has no segment " + std::to_string(segment));
    session->session.threadQueue().device().run(session->code[segment]->phys, session->model.segments[segment].insn_count, 0);
  } catch (const std::exception& e) {
    session->error = e.what();
    return -1;
  }
  session->segmentMicros += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return 0;
}

double tessera_aot_segment_micros(const TesseraAotSession* session) { return session->segmentMicros; }

}  // extern "C"

namespace tessera::runtime {

AotSession::AotSession(const TesseraAotModel& model, Session& session) {
  auto s = std::make_unique<TesseraAotSession>(model, nullptr, session);
  s->load();
  handle_ = s.release();
}

AotSession::~AotSession() { delete handle_; }

}  // namespace tessera::runtime
