/* Uses the C API from C (so the header stays valid C): runs a model once on fsim with zero inputs. */
#include <stdlib.h>
#include <string.h>

#include "tessera/c/model.h"

/* Returns 0 on success; otherwise copies the failure into `why`. */
int c_api_smoke(const char* path, float* logits, size_t logits_count, char* why, size_t why_size) {
  TesseraModel* m = tessera_model_open(path, "fsim", why, why_size);
  if (!m) return 1;
  TesseraDType dtype;
  int64_t dims[8];
  const int rank = tessera_model_input_shape(m, 0, &dtype, dims, 8);
  size_t count = 1;
  for (int i = 0; i < rank; ++i) count *= (size_t)dims[i];
  float* input = calloc(count, sizeof(float));
  int rc = input == NULL || dtype != TESSERA_FLOAT32;
  if (!rc) rc = tessera_model_set_input(m, tessera_model_input_name(m, 0), input, count * sizeof(float));
  if (!rc) rc = tessera_model_run(m);
  if (!rc) rc = tessera_model_get_output(m, tessera_model_output_name(m, 0), logits, logits_count * sizeof(float));
  if (rc) {
    strncpy(why, tessera_model_error(m), why_size - 1);
    why[why_size - 1] = 0;
  }
  free(input);
  tessera_model_close(m);
  return rc;
}
