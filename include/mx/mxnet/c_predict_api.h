/* MXNet's header name for mx's C prediction API: a program that includes
 * <mxnet/c_predict_api.h> or "c_predict_api.h" builds against mx with
 * -I<prefix>/include/mx. */
#include "../c_predict_api.h"
