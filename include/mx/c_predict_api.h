/* mx's C prediction API: the names, types and signatures of Apache MXNet
 * 1.x's c_predict_api.h, so a program written against MXNet's header builds
 * against mx by changing its include path and link flags (see
 * docs/library.md). C99; self-contained; nothing here is C++.
 *
 * Conventions (as MXNet's):
 *  - Every function returns 0 on success and -1 on failure; MXGetLastError()
 *    then says what went wrong. Nothing is written to the `out` arguments of
 *    a call that fails.
 *  - Handles are opaque; each one made by a Create or Reshape call is given
 *    back with its Free call, exactly once.
 *  - Pointers returned through the API belong to the handle: a predictor's
 *    output shape stays valid until the next call on it, a list's keys,
 *    values and shapes until MXNDListFree.
 *
 * Threads: a predictor is used by one thread at a time (calls on one handle
 * from several threads at once must be serialised by the caller); separate
 * predictors, including those made by MXPredCreateMultiThread or from one
 * another by MXPredReshape, may be used from separate threads at the same
 * time. MXGetLastError is per thread. The notes on each function below say
 * where more is allowed.
 */
#ifndef MX_C_PREDICT_API_H_
#define MX_C_PREDICT_API_H_

#ifdef __cplusplus
extern "C" {
#endif

/* What c_predict_api.h and c_api.h share, once whichever comes first. */
#ifndef MX_C_API_COMMON_
#define MX_C_API_COMMON_
/* libmx.so exports these functions and nothing else. */
#if defined(__GNUC__) || defined(__clang__)
#define MX_DLL __attribute__((visibility("default")))
#else
#define MX_DLL
#endif
typedef unsigned int mx_uint;
typedef float mx_float;
#endif /* MX_C_API_COMMON_ */

/* The version of this API: functions are only ever added. */
#define MX_C_PREDICT_API_VERSION 1

/* A bound network ready for inference. */
typedef void* PredictorHandle;
/* The arrays of a .params / .nd file, converted to float. */
typedef void* NDListHandle;

/* The message of the last failed call made by this thread ("" before any).
 * Thread-safe; the string stays valid until this thread's next failed call. */
MX_DLL const char* MXGetLastError(void);

/* Creates a predictor for inference.
 *  symbol_json_str   the network as MXNet's symbol JSON (PREFIX-symbol.json's text)
 *  param_bytes       the bytes of a .params file (PREFIX-NNNN.params), param_size of them;
 *                    arrays named "arg:NAME" / "aux:NAME" (or plain NAME)
 *  dev_type, dev_id  1 = CPU, 2 = GPU, and the device number
 *  num_input_nodes   how many inputs follow, usually 1 ("data")
 *  input_keys        their names
 *  input_shape_indptr, input_shape_data
 *                    input i's shape is input_shape_data[indptr[i]] .. [indptr[i + 1] - 1],
 *                    e.g. {0, 4} and {1, 3, 224, 224}
 *  out               the new predictor
 * Fails on malformed JSON or params (naming the byte offset), on a weight
 * missing from the params or of another shape than the network needs, and
 * on input shapes the network cannot take. Thread-safe. */
MX_DLL int MXPredCreate(const char* symbol_json_str, const void* param_bytes, int param_size,
                        int dev_type, int dev_id, mx_uint num_input_nodes, const char** input_keys,
                        const mx_uint* input_shape_indptr, const mx_uint* input_shape_data,
                        PredictorHandle* out);

/* MXPredCreate with the element types of some arguments (MXNet's type
 * flags: 0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
 * 6 int64). An input of another type than float32 is set and an output of
 * another type is read as raw elements of that type, as in MXNet.
 * Thread-safe. */
MX_DLL int MXPredCreateEx(const char* symbol_json_str, const void* param_bytes, int param_size,
                          int dev_type, int dev_id, mx_uint num_input_nodes,
                          const char** input_keys, const mx_uint* input_shape_indptr,
                          const mx_uint* input_shape_data, const mx_uint num_provided_arg_dtypes,
                          const char** provided_arg_dtype_names, const int* provided_arg_dtypes,
                          PredictorHandle* out);

/* MXPredCreate whose outputs are internal layers: output_keys are layer
 * names such as "fc1" (their "fc1_output"), num_output_nodes of them, in
 * the order of the outputs. Thread-safe. */
MX_DLL int MXPredCreatePartialOut(const char* symbol_json_str, const void* param_bytes,
                                  int param_size, int dev_type, int dev_id, mx_uint num_input_nodes,
                                  const char** input_keys, const mx_uint* input_shape_indptr,
                                  const mx_uint* input_shape_data, mx_uint num_output_nodes,
                                  const char** output_keys, PredictorHandle* out);

/* num_threads predictors sharing one copy of the weights, one for each
 * thread; out must have room for num_threads handles, each freed with
 * MXPredFree. Thread-safe. */
MX_DLL int MXPredCreateMultiThread(const char* symbol_json_str, const void* param_bytes,
                                   int param_size, int dev_type, int dev_id,
                                   mx_uint num_input_nodes, const char** input_keys,
                                   const mx_uint* input_shape_indptr,
                                   const mx_uint* input_shape_data, int num_threads,
                                   PredictorHandle* out);

/* A new predictor for other input shapes (e.g. another batch size) sharing
 * `handle`'s weights. Only the shapes of the inputs given may change.
 * `handle` stays valid; both are freed with MXPredFree. Safe while other
 * threads use other predictors; not while another thread uses `handle`. */
MX_DLL int MXPredReshape(mx_uint num_input_nodes, const char** input_keys,
                         const mx_uint* input_shape_indptr, const mx_uint* input_shape_data,
                         PredictorHandle handle, PredictorHandle* out);

/* Output `index`'s shape: *shape_data points at *shape_ndim dimensions,
 * valid until the next call on this handle. One thread per handle. */
MX_DLL int MXPredGetOutputShape(PredictorHandle handle, mx_uint index, mx_uint** shape_data,
                                mx_uint* shape_ndim);

/* Output `out_index`'s element type (MXNet's type flag, 0 = float32).
 * One thread per handle. */
MX_DLL int MXPredGetOutputType(PredictorHandle handle, mx_uint out_index, int* out_dtype);

/* Copies `size` elements into the argument `key` (an input, or any other
 * argument of the network); size must equal its element count. The data
 * may be reused as soon as the call returns. One thread per handle. */
MX_DLL int MXPredSetInput(PredictorHandle handle, const char* key, const mx_float* data,
                          mx_uint size);

/* Runs the network on the inputs set. It may return before the outputs are
 * computed; MXPredGetOutput waits for them, and reports a failure of the run.
 * One thread per handle. */
MX_DLL int MXPredForward(PredictorHandle handle);

/* Forward in steps, for progress reports: call with step = 0, 1, ... until
 * *step_left is 0. mx runs the whole network as one step (step 0; later
 * steps do nothing), so *step_left is always 0. One thread per handle. */
MX_DLL int MXPredPartialForward(PredictorHandle handle, int step, int* step_left);

/* Copies output `index` into `data`, which has room for `size` elements,
 * the output's element count; waits for the forward run to finish.
 * One thread per handle. */
MX_DLL int MXPredGetOutput(PredictorHandle handle, mx_uint index, mx_float* data, mx_uint size);

/* Frees a predictor (NULL is allowed). Not while another thread uses it. */
MX_DLL int MXPredFree(PredictorHandle handle);

/* Reads a .params / .nd file from nd_file_size bytes (e.g. a mean image),
 * converting every array to float; *out_length is the number of arrays.
 * Thread-safe. */
MX_DLL int MXNDListCreate(const char* nd_file_bytes, int nd_file_size, NDListHandle* out,
                          mx_uint* out_length);

/* Array `index` of a list: its name ("" when the file has none), its
 * values, and its shape (*out_ndim dimensions), all valid until
 * MXNDListFree. Any number of threads may read one list. */
MX_DLL int MXNDListGet(NDListHandle handle, mx_uint index, const char** out_key,
                       const mx_float** out_data, const mx_uint** out_shape, mx_uint* out_ndim);

/* Frees a list (NULL is allowed). */
MX_DLL int MXNDListFree(NDListHandle handle);

#ifdef __cplusplus
}
#endif

#endif /* MX_C_PREDICT_API_H_ */
