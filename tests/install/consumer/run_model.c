/* Runs a compiled model through the installed C API: float32 .npy input in, first output's raw bytes out. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/c/model.h>

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: run_model MODEL.tsm INPUT.npy TARGET OUTPUT.bin\n");
    return 2;
  }
  char error[512];
  TesseraModel* model = tessera_model_open(argv[1], argv[3], error, sizeof error);
  if (!model) {
    fprintf(stderr, "run_model: %s\n", error);
    return 1;
  }
  size_t size = 0;
  unsigned char* npy = read_file(argv[2], &size);
  /* .npy version 1: 6-byte magic, 2 version bytes, a little-endian 16-bit header length, the header. */
  if (!npy || size < 10 || memcmp(npy, "\x93NUMPY", 6) != 0 || npy[6] != 1) {
    fprintf(stderr, "run_model: %s is not a version-1 .npy file\n", argv[2]);
    return 1;
  }
  const size_t header = 10 + (size_t)(npy[8] | npy[9] << 8);
  if (tessera_model_set_input(model, tessera_model_input_name(model, 0), npy + header, size - header) != 0 ||
      tessera_model_run(model) != 0) {
    fprintf(stderr, "run_model: %s\n", tessera_model_error(model));
    return 1;
  }
  TesseraDType dtype;
  int64_t dims[8];
  const int rank = tessera_model_output_shape(model, 0, &dtype, dims, 8);
  size_t elements = 1;
  for (int i = 0; i < rank; ++i) elements *= (size_t)dims[i];
  const size_t bytes = elements * (dtype == TESSERA_FLOAT32 || dtype == TESSERA_INT32 ? 4 : dtype == TESSERA_INT64 ? 8 : 1);
  void* out = malloc(bytes);
  if (tessera_model_get_output(model, tessera_model_output_name(model, 0), out, bytes) != 0) {
    fprintf(stderr, "run_model: %s\n", tessera_model_error(model));
    return 1;
  }
  FILE* f = fopen(argv[4], "wb");
  if (!f || fwrite(out, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "run_model: cannot write %s\n", argv[4]);
    return 1;
  }
  printf("%s on %s: output %s, %zu bytes\n", argv[1], argv[3], tessera_model_output_name(model, 0), bytes);
  free(out);
  free(npy);
  tessera_model_close(model);
  return 0;
}
