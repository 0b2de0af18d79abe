/* Classifies the images of an IDX file (the MNIST / Fashion-MNIST layout,
 * uncompressed) with a checkpoint, through mx's C prediction API: the same
 * calls a program written for MXNet 1.x makes.
 *
 *   predict PREFIX-symbol.json PREFIX-NNNN.params IMAGES-idx3-ubyte [COUNT]
 *
 * Prints one line per image: its index, the most probable class and that
 * class's probability. Pixels are scaled by 1/256, as MXNet's MNISTIter
 * (and mx-predict on IDX files) does. Build: see docs/library.md. */
#include <mx/c_predict_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBatch = 32 };

/* The whole file, NUL-terminated (the symbol JSON is a C string). */
static char* read_file(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  char* data = NULL;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (data = malloc((size_t)*size + 1)) != NULL) {
    if (fread(data, 1, (size_t)*size, f) == (size_t)*size) {
      data[*size] = '\0';
    } else {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  return data;
}

static unsigned big_endian(const unsigned char* p) {
  return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static int api_failed(const char* call) {
  fprintf(stderr, "predict: %s failed: %s\n", call, MXGetLastError());
  return 1;
}

/* Predicts `n` images starting at `pixels` (image_size bytes each) and
 * prints their lines, numbered from `first`. */
static int classify(PredictorHandle pred, const unsigned char* pixels, mx_uint n, mx_uint first,
                    mx_uint image_size) {
  mx_uint* shape = NULL;
  mx_uint ndim = 0, classes = 0, i, k;
  float* input = malloc(sizeof(float) * n * image_size);
  float* output = NULL;
  int status = 1;
  if (input == NULL) goto out_of_memory;
  for (i = 0; i < n * image_size; ++i) input[i] = pixels[i] / 256.0f;
  if (MXPredSetInput(pred, "data", input, n * image_size) != 0) {
    status = api_failed("MXPredSetInput");
    goto done;
  }
  if (MXPredForward(pred) != 0) {
    status = api_failed("MXPredForward");
    goto done;
  }
  if (MXPredGetOutputShape(pred, 0, &shape, &ndim) != 0) {
    status = api_failed("MXPredGetOutputShape");
    goto done;
  }
  if (ndim != 2 || shape[0] != n) {
    fprintf(stderr, "predict: expected an output of shape (batch, classes)\n");
    goto done;
  }
  classes = shape[1];
  output = malloc(sizeof(float) * n * classes);
  if (output == NULL) goto out_of_memory;
  if (MXPredGetOutput(pred, 0, output, n * classes) != 0) {
    status = api_failed("MXPredGetOutput");
    goto done;
  }
  for (i = 0; i < n; ++i) {
    const float* p = output + (size_t)i * classes;
    mx_uint best = 0;
    for (k = 1; k < classes; ++k)
      if (p[k] > p[best]) best = k;
    printf("%u: %u (%.6f)\n", first + i, best, p[best]);
  }
  status = 0;
  goto done;
out_of_memory:
  fprintf(stderr, "predict: out of memory\n");
done:
  free(output);
  free(input);
  return status;
}

int main(int argc, char** argv) {
  long json_size = 0, params_size = 0, images_size = 0;
  char *json, *params, *images;
  const unsigned char* idx;
  mx_uint count, rows, cols, done, batch;
  PredictorHandle pred = NULL, last = NULL;
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4};
  mx_uint shape[4];
  int status = 0;

  if (argc < 4 || argc > 5) {
    fprintf(stderr,
            "usage: predict PREFIX-symbol.json PREFIX-NNNN.params IMAGES-idx3-ubyte [COUNT]\n");
    return 2;
  }
  json = read_file(argv[1], &json_size);
  params = read_file(argv[2], &params_size);
  images = read_file(argv[3], &images_size);
  if (json == NULL || params == NULL || images == NULL) {
    fprintf(stderr, "predict: cannot read %s\n",
            json == NULL     ? argv[1]
            : params == NULL ? argv[2]
                             : argv[3]);
    return 2;
  }
  idx = (const unsigned char*)images;
  if (images_size < 16 || big_endian(idx) != 0x803) {
    fprintf(stderr, "predict: %s is not an uncompressed IDX images file\n", argv[3]);
    return 2;
  }
  count = big_endian(idx + 4);
  rows = big_endian(idx + 8);
  cols = big_endian(idx + 12);
  if ((long)((16 + (unsigned long long)count * rows * cols)) > images_size) {
    fprintf(stderr, "predict: %s is truncated\n", argv[3]);
    return 2;
  }
  if (argc == 5 && (mx_uint)atoi(argv[4]) < count) count = (mx_uint)atoi(argv[4]);

  /* One predictor for full batches; MXPredReshape makes one for the rest. */
  batch = count < kBatch ? count : kBatch;
  shape[0] = batch, shape[1] = 1, shape[2] = rows, shape[3] = cols;
  if (batch > 0 &&
      MXPredCreate(json, params, (int)params_size, 1, 0, 1, keys, indptr, shape, &pred) != 0)
    return api_failed("MXPredCreate");
  for (done = 0; status == 0 && done + batch <= count && batch > 0; done += batch)
    status = classify(pred, idx + 16 + (size_t)done * rows * cols, batch, done, rows * cols);
  if (status == 0 && done < count) {
    shape[0] = count - done;
    if (MXPredReshape(1, keys, indptr, shape, pred, &last) != 0)
      status = api_failed("MXPredReshape");
    else
      status =
          classify(last, idx + 16 + (size_t)done * rows * cols, count - done, done, rows * cols);
  }
  MXPredFree(last);
  MXPredFree(pred);
  free(images);
  free(params);
  free(json);
  return status;
}
