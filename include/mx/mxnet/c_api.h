/* MXNet's header name for mx's C API: a program that includes
 * <mxnet/c_api.h> or "c_api.h" builds against mx with -I<prefix>/include/mx. */
#include "../c_api.h"
