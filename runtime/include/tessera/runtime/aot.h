/* The runtime side of a model compiled ahead of time (tessera compile --emit obj|shared, docs/aot.md):
 * the descriptor the generated code embeds, and the session its run function drives. */
#ifndef TESSERA_RUNTIME_AOT_H
#define TESSERA_RUNTIME_AOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever TesseraAotModel's layout or the run function's contract changes. */
#define TESSERA_AOT_ABI_VERSION 1

typedef struct TesseraAotSession TesseraAotSession;

/* One accelerator segment: its instructions encoded for the model's config (lo, hi words each),
 * and per instruction the DRAM region its address is relative to (0 constants, 1 arena, -1 none). */
typedef struct {
  uint32_t insn_count;
  const uint64_t* insns;
  const int8_t* regions;
} TesseraAotSegment;

/* A graph input or output: dtype codes as in tessera/c/model.h (0 float32, 1 uint8, 2 int8,
 * 3 int32, 4 int64). */
typedef struct {
  const char* name;
  int32_t dtype;
  int32_t rank;
  const int64_t* dims;
} TesseraAotTensor;

typedef struct TesseraAotModel {
  uint32_t abi_version;
  const char* name;
  const char* config_json;        /* the hardware config the segments were compiled for */
  const uint8_t* constants;       /* the segments' constant image, in DRAM layout */
  uint64_t constant_bytes;
  uint64_t arena_bytes;           /* the segments' activation region */
  uint64_t scratch_bytes;         /* host operators' intermediate tensors */
  uint32_t segment_count;
  const TesseraAotSegment* segments;
  uint32_t input_count, output_count;
  const TesseraAotTensor* inputs;
  const TesseraAotTensor* outputs;
  /* The model: inputs and outputs in graph order, row-major data of their dtypes. 0, or -1 with
   * tessera_aot_error() saying why. */
  int (*run)(TesseraAotSession* session, const void* const* inputs, void* const* outputs);
} TesseraAotModel;

/* Creates a session on `target` ("fsim", "tsim", ...; NULL means "fsim") with the model's config,
 * writes its constants and instructions into accelerator memory. NULL on failure, the reason in
 * `error` (at most `error_size` bytes, terminated). */
TesseraAotSession* tessera_aot_open(const TesseraAotModel* model, const char* target, char* error, size_t error_size);
void tessera_aot_close(TesseraAotSession* session);
/* The last failure's message ("" if none). */
const char* tessera_aot_error(const TesseraAotSession* session);

/* Called by generated code. The arena's host view (segment inputs are packed into it, outputs
 * read from it), the host operators' scratch memory, and one segment's run (0, or -1 with the
 * error recorded). */
uint8_t* tessera_aot_arena(TesseraAotSession* session);
uint8_t* tessera_aot_scratch(TesseraAotSession* session);
int tessera_aot_run_segment(TesseraAotSession* session, uint32_t segment);

/* Microseconds spent inside tessera_aot_run_segment since the session opened (for benchmarks that
 * separate host operators from accelerator segments). */
double tessera_aot_segment_micros(const TesseraAotSession* session);

#ifdef __cplusplus
}

#include <memory>
#include <string>

namespace tessera::runtime {
class Session;

// A session on an existing runtime Session (tessera run --host-codegen jit); the C functions take
// its handle().
class AotSession {
 public:
  AotSession(const TesseraAotModel& model, Session& session);
  ~AotSession();
  AotSession(const AotSession&) = delete;
  AotSession& operator=(const AotSession&) = delete;
  TesseraAotSession* handle() { return handle_; }

 private:
  TesseraAotSession* handle_;
};
}  // namespace tessera::runtime
#endif

#endif
