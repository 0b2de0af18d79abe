/* mx's C API: NDArrays, imperative operator calls, autograd, symbols,
 * executors, KVStores and data iterators, with the names, types and
 * signatures of Apache MXNet 1.x's c_api.h where MXNet has the function
 * (and nnvm's NNGetOpHandle), so a front end written for MXNet's C API
 * builds against mx; functions mx adds are marked "mx:". C99 and
 * self-contained; it may be included together with c_predict_api.h.
 * docs/library.md has examples and the differences from MXNet.
 *
 * Conventions (as MXNet's):
 *  - Every function returns 0 on success and -1 on failure; MXGetLastError()
 *    then says which function failed and what was wrong (the argument, the
 *    handle, the operator and parameter, the shapes). Nothing is written to
 *    the `out` arguments of a call that fails.
 *  - Handles are opaque. A handle a function makes (every `out` handle,
 *    including those in returned arrays of handles) is given back exactly
 *    once with its Free function; freeing NULL does nothing. A handle of the
 *    wrong kind (a SymbolHandle where an NDArrayHandle belongs) is refused.
 *  - Strings and arrays a function returns through pointers belong to the
 *    library and stay valid until the same thread calls the same function
 *    again (MXNet's rule), unless the function says otherwise.
 *  - Devices: dev_type 1 = CPU, 2 = GPU, 3 = pinned CPU memory; dev_id
 *    numbers the device. Element types are MXNet's type flags: 0 float32,
 *    1 float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64.
 *
 * Threads: NDArray operations are pushed to mx's dependency engine, which
 * takes pushes from any number of threads; functions that read values
 * (SyncCopyToCPU, WaitToRead) wait for the operations that write them. A
 * handle may be used by several threads as long as no call frees or writes
 * it (the autograd entry of an output, MXNDArraySyncCopyFromCPU) at the
 * same time. Autograd's recording and training switches are per thread, as
 * in MXNet. Symbols may be read by several threads; an executor, a KVStore
 * and a data iterator are used by one thread at a time. The notes of each
 * function say more where it matters. MXGetLastError is per thread.
 */
#ifndef MX_C_API_H_
#define MX_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
#define MX_C_API_VERSION 1

typedef void* NDArrayHandle;
/* An operator of the registry; the same value for AtomicSymbolCreator and
 * OpHandle. Never freed. */
typedef void* AtomicSymbolCreator;
typedef void* OpHandle;
typedef void* SymbolHandle;
typedef void* ExecutorHandle;
typedef void* KVStoreHandle;
/* A data iterator type (MNISTIter, ...). Never freed. */
typedef void* DataIterCreator;
typedef void* DataIterHandle;

/* ---- General ---------------------------------------------------------- */
/* Threads: any thread, any time. */

/* The message of the last failed call made by this thread ("" before any).
 * The string stays valid until this thread's next failed call. */
MX_DLL const char* MXGetLastError(void);

/* The MXNet version whose API and file formats mx follows: 10901 (1.9.1). */
MX_DLL int MXGetVersion(int* out);

/* Seeds the random generators of every device (Dropout masks, random
 * operators), after the operations already pushed that use them. */
MX_DLL int MXRandomSeed(int seed);

/* Waits for every pushed operation (nothing else needs doing before exit). */
MX_DLL int MXNotifyShutdown(void);

/* ---- NDArray ---------------------------------------------------------- */
/* Threads: any thread. Several threads may use one handle at once, except
 * that MXNDArrayFree and MXNDArraySyncCopyFromCPU must not race with other
 * calls on the same handle (or on views of the same memory, for the copy).
 * Waits and copies to the host block the calling thread only. */

/* An empty ("none") array, e.g. to be filled by MXNDArrayLoad or used as
 * "no array" in a list of handles. */
MX_DLL int MXNDArrayCreateNone(NDArrayHandle* out);

/* A float32 array of shape shape[0] .. shape[ndim - 1] on a device.
 * delay_alloc is accepted for MXNet's signature; memory is taken at once.
 * The values are undefined. */
MX_DLL int MXNDArrayCreate(const mx_uint* shape, mx_uint ndim, int dev_type, int dev_id,
                           int delay_alloc, NDArrayHandle* out);

/* MXNDArrayCreate with an element type (type flag). */
MX_DLL int MXNDArrayCreateEx(const mx_uint* shape, mx_uint ndim, int dev_type, int dev_id,
                             int delay_alloc, int dtype, NDArrayHandle* out);

/* Frees an array handle (NULL is allowed). The memory goes back when the
 * operations already pushed on it have run and no other handle or view
 * uses it. */
MX_DLL int MXNDArrayFree(NDArrayHandle handle);

/* Copies `size` elements (the array's element count, of its element type)
 * from host memory into the array; returns when they are in place. */
MX_DLL int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void* data, size_t size);

/* Copies the array's `size` elements (its element count) into host memory;
 * waits for the operations that write the array, and reports their
 * failure. */
MX_DLL int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void* data, size_t size);

/* Waits until the array's pending writes are done (and reports a failure of
 * the operation that made it); WaitToWrite also waits for pending reads. */
MX_DLL int MXNDArrayWaitToRead(NDArrayHandle handle);
MX_DLL int MXNDArrayWaitToWrite(NDArrayHandle handle);
/* Waits for every pushed operation; reports the first failure nobody saw. */
MX_DLL int MXNDArrayWaitAll(void);

/* The array's shape: *out_dim dimensions at *out_pdata. */
MX_DLL int MXNDArrayGetShape(NDArrayHandle handle, mx_uint* out_dim, const mx_uint** out_pdata);
/* The same as int (MXNet's numpy-shape variant; a none array has -1 dims). */
MX_DLL int MXNDArrayGetShapeEx(NDArrayHandle handle, int* out_dim, const int** out_pdata);
/* The element type flag. */
MX_DLL int MXNDArrayGetDType(NDArrayHandle handle, int* out_dtype);
/* The device the array lives on. */
MX_DLL int MXNDArrayGetContext(NDArrayHandle handle, int* out_dev_type, int* out_dev_id);

/* A view of rows [slice_begin, slice_end) along the first axis (shares
 * memory; not recorded by autograd). */
MX_DLL int MXNDArraySlice(NDArrayHandle handle, mx_uint slice_begin, mx_uint slice_end,
                          NDArrayHandle* out);
/* A view of row idx without the first axis. */
MX_DLL int MXNDArrayAt(NDArrayHandle handle, mx_uint idx, NDArrayHandle* out);
/* A view with another shape of the same element count; one dimension may
 * be -1 (inferred). */
MX_DLL int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out);

/* Writes num_args arrays to a .params file (MXNet's format, readable by
 * mx.nd.load). keys: NULL for an unnamed list, else one name per array
 * ("arg:fc1_weight" in checkpoints). Written to a temporary name and
 * renamed, so a failure leaves the previous file. */
MX_DLL int MXNDArraySave(const char* fname, mx_uint num_args, NDArrayHandle* args,
                         const char** keys);

/* Reads a .params / .nd file (mx's or MXNet's) into new CPU arrays:
 * *out_size handles at *out_arr (each freed with MXNDArrayFree) and
 * *out_name_size names (0 for an unnamed list). The lists themselves stay
 * valid until this thread's next MXNDArrayLoad. */
MX_DLL int MXNDArrayLoad(const char* fname, mx_uint* out_size, NDArrayHandle** out_arr,
                         mx_uint* out_name_size, const char*** out_names);

/* The gradient buffer of a variable marked with MXAutogradMarkVariables,
 * as a new handle (freed by the caller); *out = NULL when the array is not
 * a marked variable or its grad_req is null. */
MX_DLL int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out);

/* A new handle to the same values that autograd sees as a constant (no
 * gradient flows through it). */
MX_DLL int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out);

/* ---- Operators -------------------------------------------------------- */
/* Threads: the listings and the info call are read-only (any thread).
 * MXImperativeInvoke may be called from several threads at once (the engine
 * orders the calls by the arrays they read and write); given outputs must
 * not be used by another call on another thread at the same time, since the
 * call sets their autograd entries. */

/* Every operator name, aliases included (MXNet's spelling). */
MX_DLL int MXListAllOpNames(mx_uint* out_size, const char*** out_array);

/* The operator called op_name (a name or an alias); nnvm's function. */
MX_DLL int NNGetOpHandle(const char* op_name, OpHandle* op_out);

/* Every operator as a creator, in MXListAllOpNames's order. */
MX_DLL int MXSymbolListAtomicSymbolCreators(mx_uint* out_size, AtomicSymbolCreator** out_array);

/* The operator's name (its main name for an alias). */
MX_DLL int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char** name);

/* What a front end needs to generate a function for the operator (MXNet's
 * layout, which its Python code generator reads):
 *  name, description
 *  num_args, arg_names, arg_type_infos, arg_descriptions
 *      the inputs first (type "NDArray-or-Symbol", or "NDArray-or-Symbol[]"
 *      for a variable number of them), then the auxiliary states (same
 *      type), then the parameters, with types such as "int, required",
 *      "float, optional, default=0.5" or "{'avg', 'max', 'sum'}, optional,
 *      default='max'"
 *  key_var_num_args  the parameter that counts a variable number of inputs
 *      ("num_args" for Concat), else ""
 *  return_type       "NDArray-or-Symbol" (may be NULL if not wanted)
 * Inputs that depend on parameters (FullyConnected's bias with no_bias) are
 * listed for the defaults. Every string stays valid while the library is
 * loaded. */
MX_DLL int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char** name,
                                       const char** description, mx_uint* num_args,
                                       const char*** arg_names, const char*** arg_type_infos,
                                       const char*** arg_descriptions,
                                       const char** key_var_num_args, const char** return_type);

/* Runs an operator on arrays (MXNet's imperative call). The operator comes
 * from NNGetOpHandle or MXSymbolListAtomicSymbolCreators; its parameters are
 * num_params strings (param_keys[i] = param_vals[i], MXNet's spellings such
 * as "kernel" = "(3, 3)"). inputs: its inputs, then its auxiliary states
 * (BatchNorm: data, gamma, beta, moving_mean, moving_var). Outputs:
 *  - *num_outputs == 0: new arrays are made for the visible outputs;
 *    *num_outputs and *outputs receive them (new handles, each freed by the
 *    caller; the list is valid until this thread's next call);
 *  - else *num_outputs arrays at *outputs receive the outputs (shapes and
 *    types as the operator makes them); an output may be an input.
 * The call is pushed to the engine and returns at once. It runs in this
 * thread's training mode (MXAutogradSetIsTraining) and, while this thread
 * records (MXAutogradSetIsRecording), is recorded when an input needs a
 * gradient. */
MX_DLL int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs,
                              int* num_outputs, NDArrayHandle** outputs, int num_params,
                              const char** param_keys, const char** param_vals);

/* ---- Autograd --------------------------------------------------------- */
/* Threads: the switches are per thread (a thread records its own calls
 * only, as in MXNet). Marking and backward change the arrays' autograd
 * entries and free recorded values: no other thread may record with, mark
 * or run backward through the same arrays at the same time. */

/* This thread's recording switch: while it is on, operator calls on arrays
 * that need gradients are recorded. *prev receives the previous value. */
MX_DLL int MXAutogradSetIsRecording(int is_recording, int* prev);
/* This thread's training switch (Dropout drops, BatchNorm uses batch
 * statistics); *prev receives the previous value. */
MX_DLL int MXAutogradSetIsTraining(int is_training, int* prev);
MX_DLL int MXAutogradIsRecording(bool* curr);
MX_DLL int MXAutogradIsTraining(bool* curr);

/* Marks num_var arrays as variables: backward writes the gradient of
 * var_handles[i] into grad_handles[i] (same shape, type and device) as
 * reqs_array[i] says: 0 null (no gradient), 1 write, 2 write (MXNet's
 * in-place write), 3 add. Marking an array again starts a new variable. */
MX_DLL int MXAutogradMarkVariables(mx_uint num_var, NDArrayHandle* var_handles, mx_uint* reqs_array,
                                   NDArrayHandle* grad_handles);

/* MXAutogradBackwardEx with no variables, create_graph 0 and is_train 1. */
MX_DLL int MXAutogradBackward(mx_uint num_output, NDArrayHandle* output_handles,
                              NDArrayHandle* ograd_handles, int retain_graph);

/* The backward pass of the recorded calls that made the heads
 * (output_handles, results of recorded calls or marked variables):
 *  ograd_handles   NULL (ones for every head), or one array per head, each
 *                  NULL (ones) or the head's gradient
 *  num_variables   0: the gradients go into the marked variables' buffers;
 *                  else the gradients with respect to var_handles (marked
 *                  variables) come back as new arrays at *grad_handles (each
 *                  freed by the caller; the list is valid until this
 *                  thread's next call), and *grad_stypes (if not NULL) gets
 *                  their storage types (0, dense)
 *  retain_graph    keep the recorded values, to run backward through them
 *                  again; otherwise they are freed
 *  create_graph    must be 0 (mx records no gradient of gradients)
 *  is_train        accepted for MXNet's signature: each recorded call's
 *                  backward runs in the mode the call ran in
 * The gradient steps are pushed to the engine; reading a gradient waits for
 * them. */
MX_DLL int MXAutogradBackwardEx(mx_uint num_output, NDArrayHandle* output_handles,
                                NDArrayHandle* ograd_handles, mx_uint num_variables,
                                NDArrayHandle* var_handles, int retain_graph, int create_graph,
                                int is_train, NDArrayHandle** grad_handles, int** grad_stypes);

/* ---- Symbol ----------------------------------------------------------- */
/* Threads: reading a symbol (listings, inference, JSON, binding) is safe
 * from several threads; MXSymbolCompose, MXSymbolSetAttr and MXSymbolFree
 * change it and must not race with other calls on it. */

/* A free variable called name. */
MX_DLL int MXSymbolCreateVariable(const char* name, SymbolHandle* out);
/* An operator with its parameters (as MXImperativeInvoke's), not yet
 * applied to inputs: MXSymbolCompose does that. */
MX_DLL int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, mx_uint num_param,
                                      const char** keys, const char** vals, SymbolHandle* out);
/* Applies an atomic symbol (from MXSymbolCreateAtomicSymbol, composed only
 * once) to num_args symbols of one output each, by position (keys NULL) or
 * by input name (keys[i], e.g. "data", "weight"); inputs not given become
 * variables NAME_INPUT ("fc1_weight"). name must not be NULL or empty.
 * `sym` becomes the composed symbol. */
MX_DLL int MXSymbolCompose(SymbolHandle sym, const char* name, mx_uint num_args, const char** keys,
                           SymbolHandle* args);
/* The outputs of several symbols as one. */
MX_DLL int MXSymbolCreateGroup(mx_uint num_symbols, SymbolHandle* symbols, SymbolHandle* out);
/* From MXNet's symbol JSON (text, or a file such as PREFIX-symbol.json). */
MX_DLL int MXSymbolCreateFromJSON(const char* json, SymbolHandle* out);
MX_DLL int MXSymbolCreateFromFile(const char* fname, SymbolHandle* out);
/* mx: from a network in mx's YAML language (docs/config.md: the mapping
 * under a config's `network:` key, with `layers:` and optional `blocks:`),
 * e.g. "layers:\n  - {op: FullyConnected, name: fc1, num_hidden: 10}\n".
 * Errors name the line and column. */
MX_DLL int MXSymbolCreateFromYAML(const char* yaml, SymbolHandle* out);
/* MXNet's JSON of the symbol (*out_json valid until this thread's next
 * call), or written to a file. */
MX_DLL int MXSymbolSaveToJSON(SymbolHandle symbol, const char** out_json);
MX_DLL int MXSymbolSaveToFile(SymbolHandle symbol, const char* fname);
/* Frees a symbol (NULL is allowed). */
MX_DLL int MXSymbolFree(SymbolHandle symbol);
/* A new handle to a copy of the symbol (composing one leaves the other). */
MX_DLL int MXSymbolCopy(SymbolHandle symbol, SymbolHandle* out);
/* The name of a symbol of one output; *success = 0 for a group. */
MX_DLL int MXSymbolGetName(SymbolHandle symbol, const char** out, int* success);
/* An attribute of a symbol of one output (a parameter or "__shape__",
 * "__lr_mult__", ...); *success = 0 when absent. */
MX_DLL int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success);
/* Sets an attribute; a parameter of an operator is checked. */
MX_DLL int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value);
/* The names of the arguments (free variables that are not auxiliary
 * states), outputs ("fc1_output") and auxiliary states, in MXNet's order. */
MX_DLL int MXSymbolListArguments(SymbolHandle symbol, mx_uint* out_size,
                                 const char*** out_str_array);
MX_DLL int MXSymbolListOutputs(SymbolHandle symbol, mx_uint* out_size, const char*** out_str_array);
MX_DLL int MXSymbolListAuxiliaryStates(SymbolHandle symbol, mx_uint* out_size,
                                       const char*** out_str_array);
MX_DLL int MXSymbolGetNumOutputs(SymbolHandle symbol, mx_uint* output_count);
/* Every output of every node as one symbol. */
MX_DLL int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle* out);
/* Output `index` as a symbol. */
MX_DLL int MXSymbolGetOutput(SymbolHandle symbol, mx_uint index, SymbolHandle* out);

/* Shapes of the arguments, outputs and auxiliary states from the shapes of
 * some arguments: num_args of them named keys[i] (keys NULL: the first
 * num_args arguments in order), argument i's shape being
 * arg_shape_data[arg_ind_ptr[i]] .. [arg_ind_ptr[i + 1] - 1]. For each of
 * the three lists: its length, each shape's ndim and each shape's dims.
 * *complete = 1 when every shape is known; unknown ones have ndim 0. A
 * conflict (a given shape the network cannot take) fails naming the layer. */
MX_DLL int MXSymbolInferShape(SymbolHandle sym, mx_uint num_args, const char** keys,
                              const mx_uint* arg_ind_ptr, const mx_uint* arg_shape_data,
                              mx_uint* in_shape_size, const mx_uint** in_shape_ndim,
                              const mx_uint*** in_shape_data, mx_uint* out_shape_size,
                              const mx_uint** out_shape_ndim, const mx_uint*** out_shape_data,
                              mx_uint* aux_shape_size, const mx_uint** aux_shape_ndim,
                              const mx_uint*** aux_shape_data, int* complete);
/* The same with int shapes; unknown shapes have ndim -1 and unknown
 * dimensions -1 (MXNet's numpy-shape semantics). */
MX_DLL int MXSymbolInferShapeEx(SymbolHandle sym, mx_uint num_args, const char** keys,
                                const mx_uint* arg_ind_ptr, const int* arg_shape_data,
                                mx_uint* in_shape_size, const int** in_shape_ndim,
                                const int*** in_shape_data, mx_uint* out_shape_size,
                                const int** out_shape_ndim, const int*** out_shape_data,
                                mx_uint* aux_shape_size, const int** aux_shape_ndim,
                                const int*** aux_shape_data, int* complete);
/* Element types (type flags) of the arguments, outputs and auxiliary states
 * from some arguments' (as for MXSymbolInferShape); unknown ones are -1. */
MX_DLL int MXSymbolInferType(SymbolHandle sym, mx_uint num_args, const char** keys,
                             const int* arg_type_data, mx_uint* in_type_size,
                             const int** in_type_data, mx_uint* out_type_size,
                             const int** out_type_data, mx_uint* aux_type_size,
                             const int** aux_type_data, int* complete);

/* ---- Executor --------------------------------------------------------- */
/* Threads: one thread at a time per executor; different executors may run
 * on different threads at once. */

/* Binds a symbol to arrays on one device (MXNet's MXExecutorBind):
 *  len, in_args        one array per argument, in MXSymbolListArguments order
 *  arg_grad_store      one array per argument for its gradient (NULL entries,
 *                      or a NULL list, for none)
 *  grad_req_type       per argument: 0 null, 1 write, 2 write (in place), 3 add
 *                      (NULL: write where a gradient array is given)
 *  aux_states_len, aux_states
 *                      one array per auxiliary state, in list order
 * The executor uses the arrays themselves (not copies): forward reads
 * in_args as they are then, backward writes arg_grad_store. Freeing the
 * handles afterwards is fine; the executor keeps the arrays. */
MX_DLL int MXExecutorBind(SymbolHandle symbol_handle, int dev_type, int dev_id, mx_uint len,
                          NDArrayHandle* in_args, NDArrayHandle* arg_grad_store,
                          mx_uint* grad_req_type, mx_uint aux_states_len, NDArrayHandle* aux_states,
                          ExecutorHandle* out);
/* MXExecutorBind with MXNet's extra arguments: num_map_keys must be 0 (mx
 * binds a symbol to one device; no group2ctx), shared_exec may be NULL or an
 * executor, whose memory mx does not share (each executor plans its own). */
MX_DLL int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id,
                            mx_uint num_map_keys, const char** map_keys, const int* map_dev_types,
                            const int* map_dev_ids, mx_uint len, NDArrayHandle* in_args,
                            NDArrayHandle* arg_grad_store, mx_uint* grad_req_type,
                            mx_uint aux_states_len, NDArrayHandle* aux_states,
                            ExecutorHandle shared_exec, ExecutorHandle* out);
/* Pushes the forward pass (is_train 1: training behaviour, and needed before
 * backward). */
MX_DLL int MXExecutorForward(ExecutorHandle handle, int is_train);
/* Pushes the backward pass: len 0 (ones for every output that is not a
 * loss), or one head gradient per output (NULL entries: ones). */
MX_DLL int MXExecutorBackward(ExecutorHandle handle, mx_uint len, NDArrayHandle* head_grads);
/* The same; is_train must be 1 (mx's backward needs a training forward). */
MX_DLL int MXExecutorBackwardEx(ExecutorHandle handle, mx_uint len, NDArrayHandle* head_grads,
                                int is_train);
/* The outputs as new handles (each freed by the caller; the list is valid
 * until this thread's next call). They are the executor's own arrays:
 * every forward pass writes them. */
MX_DLL int MXExecutorOutputs(ExecutorHandle handle, mx_uint* out_size, NDArrayHandle** out);
/* Frees an executor (NULL is allowed); pushed operations still run. */
MX_DLL int MXExecutorFree(ExecutorHandle handle);

/* ---- KVStore ---------------------------------------------------------- */
/* Threads: one thread at a time per store (its pushes and pulls are engine
 * operations, so they overlap computation all the same). */

/* A KVStore: "local" or "device" (the devices of this process), or
 * "dist_sync" / "dist_async" (this process is a worker of a job started by
 * mpirun with mx-serve-ps servers, e.g. `mpirun -np 1 mx-serve-ps : -np 2
 * ./app`; MPI starts here). One per process for the dist types. */
MX_DLL int MXKVStoreCreate(const char* type, KVStoreHandle* out);
/* Frees a store (NULL is allowed). A dist store first waits for its
 * operations, meets the other workers and, once all are done, tells the
 * servers to exit. */
MX_DLL int MXKVStoreFree(KVStoreHandle handle);
/* The initial value of num keys (keys[i] gets vals[i]); in a dist store
 * worker 0's values reach the servers and every worker waits for them. */
MX_DLL int MXKVStoreInit(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals);
/* Pushes num values; a key may appear several times (one value per device),
 * and its values are summed. With an optimizer set, the sum updates the
 * stored value (in a dist_sync store after every worker's push); without,
 * it replaces it. Pushed to the engine; returns at once. */
MX_DLL int MXKVStorePush(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals,
                         int priority);
/* Pulls the stored values into num arrays (a key may appear several times);
 * ordered after this process's earlier pushes of the key. */
MX_DLL int MXKVStorePull(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals,
                         int priority);
/* mx: runs an optimizer where the values live (in this process for local and
 * device, on the servers for dist), by MXNet's name ("sgd", "adam", "nag",
 * "rmsprop", "adagrad", "adamw") and parameters as strings ("learning_rate",
 * "momentum", "wd", "rescale_grad", ...). MXNet's Python front end does
 * this with MXKVStoreSetUpdater (a Python function, local) or by sending the
 * pickled optimizer to the servers; mx takes the optimizer by name both
 * ways. Collective over the workers for dist. */
MX_DLL int MXKVStoreSetOptimizer(KVStoreHandle handle, const char* optimizer, mx_uint num_params,
                                 const char** keys, const char** vals);
/* The store's type ("local", ...), valid while the store lives. */
MX_DLL int MXKVStoreGetType(KVStoreHandle handle, const char** type);
/* This worker's rank (0 .. group size - 1) and the number of workers (1 for
 * local and device). */
MX_DLL int MXKVStoreGetRank(KVStoreHandle handle, int* ret);
MX_DLL int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret);
/* Waits for this process's operations, then for every worker to get here. */
MX_DLL int MXKVStoreBarrier(KVStoreHandle handle);
/* A program using this API is always a worker: servers are mx-serve-ps. */
MX_DLL int MXKVStoreIsWorkerNode(int* ret);
MX_DLL int MXKVStoreIsServerNode(int* ret);
MX_DLL int MXKVStoreIsSchedulerNode(int* ret);

/* ---- Data iterators --------------------------------------------------- */
/* Threads: the listings are read-only (any thread); one thread at a time
 * per iterator (its own worker threads prepare batches ahead). */

/* The iterator types: MNISTIter, ImageRecordIter, CSVIter, SyntheticIter. */
MX_DLL int MXListDataIters(mx_uint* out_size, DataIterCreator** out_array);
/* An iterator type's name, description and parameters (names, types as in
 * MXSymbolGetAtomicSymbolInfo, descriptions); valid while the library is
 * loaded. */
MX_DLL int MXDataIterGetIterInfo(DataIterCreator creator, const char** name,
                                 const char** description, mx_uint* num_args,
                                 const char*** arg_names, const char*** arg_type_infos,
                                 const char*** arg_descriptions);
/* An iterator from num_param string parameters (MXNet's names, e.g. MNISTIter
 * "image", "label", "batch_size", "shuffle", "flat"). Files are opened
 * here; bad parameters and unreadable files fail here. */
MX_DLL int MXDataIterCreateIter(DataIterCreator handle, mx_uint num_param, const char** keys,
                                const char** vals, DataIterHandle* out);
/* Frees an iterator (NULL is allowed). */
MX_DLL int MXDataIterFree(DataIterHandle handle);
/* Moves to the next batch: *out = 1, or 0 at the end of the epoch. */
MX_DLL int MXDataIterNext(DataIterHandle handle, int* out);
/* Starts the next epoch (a new order when shuffling). */
MX_DLL int MXDataIterBeforeFirst(DataIterHandle handle);
/* The current batch's data and label as new handles (freed by the caller).
 * They are the batch's own arrays: the next MXDataIterNext may reuse their
 * memory for the next batch, so copy what must outlive it. */
MX_DLL int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out);
MX_DLL int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out);
/* How many examples at the end of the current batch only fill it up. */
MX_DLL int MXDataIterGetPadNum(DataIterHandle handle, int* pad);
/* The current batch's example indices (*out_size of them), valid until the
 * next MXDataIterNext. */
MX_DLL int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size);

#ifdef __cplusplus
}
#endif

#endif /* MX_C_API_H_ */
