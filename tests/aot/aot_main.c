/* A program linking a model compiled ahead of time: reads its inputs from .npy files, runs it on a target, writes raw outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include TESSERA_AOT_HEADER

static size_t dtypeBytes(int dtype) {
  switch (dtype) {
    case 0: return 4;
    case 1: case 2: return 1;
    case 3: return 4;
    default: return 8;
  }
}

static size_t tensorBytes(const TesseraAotTensor* t) {
  size_t n = dtypeBytes(t->dtype);
  for (int k = 0; k < t->rank; ++k) n *= (size_t)t->dims[k];
  return n;
}

/* The payload of a version 1 or 2 .npy file, which must be exactly `bytes` long (the caller's dtype
 * and shape are the model's; the CLI's conversions are not repeated here). */
static void* readNpy(const char* path, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "%s: cannot open\n", path); return NULL; }
  unsigned char head[12];
  if (fread(head, 1, 12, f) != 12 || memcmp(head, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    fclose(f);
    return NULL;
  }
  long offset = head[6] == 1 ? 10 + (head[8] | head[9] << 8) : 12 + (head[8] | head[9] << 8 | head[10] << 16 | (long)head[11] << 24);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  if (size - offset != (long)bytes) {
    fprintf(stderr, "%s: holds %ld bytes of data, the model's input takes %zu\n", path, size - offset, bytes);
    fclose(f);
    return NULL;
  }
  void* data = malloc(bytes);
  fseek(f, offset, SEEK_SET);
  if (fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "%s: short read\n", path);
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  const TesseraAotModel* model = &TESSERA_AOT_MODEL;
  if (argc != 3 + (int)model->input_count) {
    fprintf(stderr, "usage: %s TARGET OUTPUT.raw INPUT.npy... (%u inputs)\n", argv[0], model->input_count);
    return 2;
  }
  const void* inputs[16];
  void* outputs[16];
  if (model->input_count > 16 || model->output_count > 16) { fprintf(stderr, "too many tensors\n"); return 1; }
  /* Inputs first: a bad file is refused before the session reserves its simulated DRAM (slow under qemu). */
  for (unsigned i = 0; i < model->input_count; ++i)
    if (!(inputs[i] = readNpy(argv[3 + i], tensorBytes(&model->inputs[i])))) return 1;
  char error[512];
  TesseraAotSession* session = tessera_aot_open(model, argv[1], error, sizeof error);
  if (!session) { fprintf(stderr, "%s\n", error); return 1; }
  for (unsigned i = 0; i < model->output_count; ++i) outputs[i] = calloc(1, tensorBytes(&model->outputs[i]));
  if (model->run(session, inputs, outputs) != 0) { fprintf(stderr, "%s\n", tessera_aot_error(session)); return 1; }
  FILE* out = fopen(argv[2], "wb");
  if (!out) { fprintf(stderr, "%s: cannot write\n", argv[2]); return 1; }
  for (unsigned i = 0; i < model->output_count; ++i) fwrite(outputs[i], 1, tensorBytes(&model->outputs[i]), out);
  fclose(out);
  printf("%s on %s: %u output(s), %.0f us in segments\n", model->name, argv[1], model->output_count,
         tessera_aot_segment_micros(session));
  for (unsigned i = 0; i < model->input_count; ++i) free((void*)inputs[i]);
  for (unsigned i = 0; i < model->output_count; ++i) free(outputs[i]);
  tessera_aot_close(session);
  return 0;
}
