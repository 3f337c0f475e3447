/* The C API for compiled models: open a .tsm on a target, set inputs, run, read outputs. */
#ifndef TESSERA_C_MODEL_H
#define TESSERA_C_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled model loaded on a target, with its own session (DRAM, device) and last error. */
typedef struct TesseraModel TesseraModel;

typedef enum { TESSERA_FLOAT32 = 0, TESSERA_UINT8 = 1, TESSERA_INT8 = 2, TESSERA_INT32 = 3, TESSERA_INT64 = 4, TESSERA_BOOL = 5 } TesseraDType;

/* Loads `path` (a file written by `tessera compile -o`) and prepares it on `target` ("fsim",
 * "tsim", ...; NULL means "fsim") with the config it was compiled for. Returns NULL on failure
 * and writes the reason (naming the file) into `error` (at most `error_size` bytes, terminated). */
TesseraModel* tessera_model_open(const char* path, const char* target, char* error, size_t error_size);
void tessera_model_close(TesseraModel* model);

/* Inputs and outputs in graph order. `index` out of range returns -1 / NULL. */
int tessera_model_input_count(const TesseraModel* model);
int tessera_model_output_count(const TesseraModel* model);
const char* tessera_model_input_name(const TesseraModel* model, int index);
const char* tessera_model_output_name(const TesseraModel* model, int index);
/* The tensor's dtype, rank and dimensions (up to `max_dims` written to `dims`). */
int tessera_model_input_shape(const TesseraModel* model, int index, TesseraDType* dtype, int64_t* dims, int max_dims);
int tessera_model_output_shape(const TesseraModel* model, int index, TesseraDType* dtype, int64_t* dims, int max_dims);

/* Copies `bytes` of row-major data of the input's dtype (its element count times the element
 * size exactly). Returns 0, or -1 with tessera_model_error() saying why. */
int tessera_model_set_input(TesseraModel* model, const char* name, const void* data, size_t bytes);
/* Runs the whole model on the target. Returns 0 or -1. */
int tessera_model_run(TesseraModel* model);
/* Copies the named output of the last run (its dtype, exactly its size). Returns 0 or -1. */
int tessera_model_get_output(TesseraModel* model, const char* name, void* data, size_t bytes);
/* Device cycles of the last run (0 on untimed targets such as fsim). */
uint64_t tessera_model_cycles(const TesseraModel* model);

/* The last failure's message on this model ("" if none). */
const char* tessera_model_error(const TesseraModel* model);

#ifdef __cplusplus
}
#endif

#endif
