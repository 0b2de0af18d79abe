/* Imperative NDArrays and autograd through mx's C API (c_api.h): a linear
 * layer y = x w^T + b and the loss sum(y * y), its gradients with respect
 * to w and b by autograd, checked against the formulas
 * dw = 2 y^T x, db = 2 sum_rows(y). Prints the gradients and "ok".
 * Build: see docs/library.md (the same CMake project as predict.c). */
#include <math.h>
#include <mx/c_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                \
  do {                                                             \
    if ((call) != 0) {                                             \
      fprintf(stderr, "%s failed: %s\n", #call, MXGetLastError()); \
      exit(1);                                                     \
    }                                                              \
  } while (0)

static NDArrayHandle array(const mx_uint* shape, mx_uint ndim, const float* values, size_t n) {
  NDArrayHandle h = NULL;
  CHECK(MXNDArrayCreate(shape, ndim, 1, 0, 0, &h));
  CHECK(MXNDArraySyncCopyFromCPU(h, values, n));
  return h;
}

/* One operator call with new outputs; returns the first. */
static NDArrayHandle call(const char* op_name, int num_inputs, NDArrayHandle* inputs,
                          int num_params, const char** keys, const char** vals) {
  OpHandle op = NULL;
  CHECK(NNGetOpHandle(op_name, &op));
  int num_outputs = 0;
  NDArrayHandle* outputs = NULL;
  CHECK(MXImperativeInvoke(op, num_inputs, inputs, &num_outputs, &outputs, num_params, keys, vals));
  return outputs[0];
}

int main(void) {
  const mx_uint x_shape[] = {2, 3}, w_shape[] = {2, 3}, b_shape[] = {2};
  const float xv[] = {1, 2, 3, 4, 5, 6}, wv[] = {0.5f, -1, 0, 1, 0, 2}, bv[] = {1, -1};
  const float zeros[] = {0, 0, 0, 0, 0, 0};
  NDArrayHandle x = array(x_shape, 2, xv, 6), w = array(w_shape, 2, wv, 6),
                b = array(b_shape, 1, bv, 2);
  NDArrayHandle dw = array(w_shape, 2, zeros, 6), db = array(b_shape, 1, zeros, 2);

  /* w and b are variables whose gradients go into dw and db (1: write). */
  NDArrayHandle vars[] = {w, b}, grads[] = {dw, db};
  mx_uint reqs[] = {1, 1};
  CHECK(MXAutogradMarkVariables(2, vars, reqs, grads));

  int was_recording = 0;
  CHECK(MXAutogradSetIsRecording(1, &was_recording));
  NDArrayHandle fc_in[] = {x, w, b};
  const char* keys[] = {"num_hidden"};
  const char* vals[] = {"2"};
  NDArrayHandle y = call("FullyConnected", 3, fc_in, 1, keys, vals);
  NDArrayHandle yy_in[] = {y, y};
  NDArrayHandle yy = call("elemwise_mul", 2, yy_in, 0, NULL, NULL);
  NDArrayHandle loss = call("sum", 1, &yy, 0, NULL, NULL);
  CHECK(MXAutogradSetIsRecording(was_recording, &was_recording));
  CHECK(MXAutogradBackward(1, &loss, NULL, 0));

  float y_host[4], dw_host[6], db_host[2];
  CHECK(MXNDArraySyncCopyToCPU(y, y_host, 4));
  CHECK(MXNDArraySyncCopyToCPU(dw, dw_host, 6));
  CHECK(MXNDArraySyncCopyToCPU(db, db_host, 2));
  int ok = 1;
  for (int j = 0; j < 2; ++j) {
    float want_db = 2 * (y_host[j] + y_host[2 + j]);
    ok = ok && fabsf(db_host[j] - want_db) < 1e-4f;
    for (int k = 0; k < 3; ++k) {
      float want = 2 * (y_host[j] * xv[k] + y_host[2 + j] * xv[3 + k]);
      ok = ok && fabsf(dw_host[j * 3 + k] - want) < 1e-4f;
    }
  }
  printf("dw = [%g %g %g; %g %g %g], db = [%g %g]\n", dw_host[0], dw_host[1], dw_host[2],
         dw_host[3], dw_host[4], dw_host[5], db_host[0], db_host[1]);
  NDArrayHandle all[] = {x, w, b, dw, db, y, yy, loss};
  for (int i = 0; i < 8; ++i) CHECK(MXNDArrayFree(all[i]));
  puts(ok ? "ok" : "gradients differ from the formulas");
  return ok ? 0 : 1;
}
