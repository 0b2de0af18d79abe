# mx as a library, as a user installs and uses it: `cmake --install` into a
# prefix that is then moved (the CMake and pkg-config files are relocatable),
# the files the install must hold, libmx.so's exports (the C API only), the
# C example built against the moved tree with find_package(mx) and with
# pkg-config, its predictions equal to mx-predict's on the same checkpoint,
# a program written for MXNet's header names, man pages and bash completion;
# the C imperative example and the C++ example (mx.hpp, train_mlp: a few
# hundred batches of Fashion-MNIST) built with find_package(mx) and run.
#   cmake -DBUILD=<build dir> -DSOURCE=... -DFIXTURES=... -DWORK_DIR=... -DC_COMPILER=...
#         -DCXX_COMPILER=...
#         -DPKG_CONFIG=... -DNM=... -DPROGRAMS=mx-train,mx-predict,... -P library_install.cmake
cmake_policy(VERSION 3.22)
set(FM /usr/share/datasets/fashion-mnist)
string(REPLACE "," ";" PROGRAMS "${PROGRAMS}")
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)
require_fashion_mnist(${FM})

set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})

# Install, then move the tree: nothing may point at where it was installed.
run(0 out ${CMAKE_COMMAND} --install ${BUILD} --prefix ${W}/stage)
file(RENAME ${W}/stage ${W}/prefix)
set(P ${W}/prefix)
file(GLOB_RECURSE libdir_files LIST_DIRECTORIES false ${P}/lib*/libmx.so.0)
list(LENGTH libdir_files n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one libmx.so.0 under ${P}, found: ${libdir_files}")
endif()
get_filename_component(LIBDIR ${libdir_files} DIRECTORY)
set(expected ${LIBDIR}/libmx.so ${P}/include/mx/c_predict_api.h ${P}/include/mx/mxnet/c_predict_api.h
             ${P}/include/mx/c_api.h ${P}/include/mx/mxnet/c_api.h ${P}/include/mx/mx.hpp
             ${LIBDIR}/cmake/mx/mxConfig.cmake ${LIBDIR}/cmake/mx/mxConfigVersion.cmake
             ${LIBDIR}/pkgconfig/mx.pc)
foreach(program IN LISTS PROGRAMS)
  list(APPEND expected ${P}/bin/${program} ${P}/share/man/man1/${program}.1
       ${P}/share/bash-completion/completions/${program})
endforeach()
foreach(f IN LISTS expected)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "the installed tree lacks ${f}")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${LIBDIR}/cmake/mx/*.cmake ${LIBDIR}/pkgconfig/mx.pc)
foreach(f IN LISTS config_files)
  file(READ ${f} text)
  if(text MATCHES "${W}/stage")
    message(FATAL_ERROR "${f} names the directory it was installed to, so it cannot be moved")
  endif()
endforeach()

# libmx.so.0 (the SONAME) exports the C API (and nnvm's NNGetOpHandle) and nothing else.
run(0 out ${NM} -D --defined-only ${LIBDIR}/libmx.so.0)
string(REGEX MATCHALL "[0-9a-f]+ [A-Za-z] [^\n]+" symbols "${out}")
set(api)
foreach(line IN LISTS symbols)
  string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] ([^@]+).*" "\\1" name "${line}")
  if(NOT name MATCHES "^(MX|NN)[A-Z]" AND NOT name STREQUAL "MX_0")
    message(FATAL_ERROR "libmx.so exports '${name}', which is not part of the C API")
  endif()
  list(APPEND api ${name})
endforeach()
foreach(name MXGetLastError MXPredCreate MXPredCreateEx MXPredCreatePartialOut MXPredReshape
             MXPredSetInput MXPredForward MXPredGetOutputShape MXPredGetOutput MXPredFree
             MXNDListCreate MXNDListGet MXNDListFree MXNDArrayCreateEx MXImperativeInvoke
             NNGetOpHandle MXAutogradBackwardEx MXSymbolCreateFromYAML MXExecutorBindEX
             MXKVStoreCreate MXDataIterCreateIter)
  if(NOT name IN_LIST api)
    message(FATAL_ERROR "libmx.so does not export ${name}")
  endif()
endforeach()

# The example's input: the first test images, uncompressed, and mx-predict's
# answers on them (its IDX input takes the labels too).
execute_process(COMMAND gzip -dc ${FM}/t10k-images-idx3-ubyte.gz OUTPUT_FILE ${W}/t10k-images-idx3-ubyte
                RESULT_VARIABLE code)
execute_process(COMMAND gzip -dc ${FM}/t10k-labels-idx1-ubyte.gz OUTPUT_FILE ${W}/t10k-labels-idx1-ubyte
                RESULT_VARIABLE code2)
if(NOT code EQUAL 0 OR NOT code2 EQUAL 0)
  message(FATAL_ERROR "gzip -dc of the Fashion-MNIST test files failed")
endif()
set(MODEL ${FIXTURES}/onnx/lenet/model)
set(COUNT 70)  # two batches of 32 and a reshaped one of 6
run(0 reference ${P}/bin/mx-predict -m ${MODEL}-0001 ${W}/t10k-images-idx3-ubyte
    --labels ${W}/t10k-labels-idx1-ubyte --json --top-k 1)
string(REGEX MATCHALL "\"class\": [0-9]+" want_classes "${reference}")
string(REGEX MATCHALL "\"probability\": [0-9.e+-]+" want_probabilities "${reference}")

# A probability as an integer count of 1e-7.
function(to_units text out_var)
  if(NOT text MATCHES "^([0-9]+)\\.?([0-9]*)$")
    message(FATAL_ERROR "unexpected probability '${text}'")
  endif()
  set(whole ${CMAKE_MATCH_1})
  string(SUBSTRING "${CMAKE_MATCH_2}0000000" 0 7 fraction)
  string(REGEX REPLACE "^0+([0-9])" "\\1" fraction "${fraction}")
  math(EXPR units "${whole} * 10000000 + ${fraction}")
  set(${out_var} ${units} PARENT_SCOPE)
endfunction()

# The example's lines "i: class (probability)" against mx-predict's answers.
function(check_predictions output what)
  string(REGEX MATCHALL "[0-9]+: [0-9]+ \\([0-9.]+\\)" lines "${output}")
  list(LENGTH lines n)
  if(NOT n EQUAL COUNT)
    message(FATAL_ERROR "${what}: ${n} predictions, expected ${COUNT}:\n${output}")
  endif()
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^([0-9]+): ([0-9]+) \\(([0-9.]+)\\)" _ "${line}")
    set(i ${CMAKE_MATCH_1})
    set(class ${CMAKE_MATCH_2})
    to_units(${CMAKE_MATCH_3} got)
    list(GET want_classes ${i} want_class)
    list(GET want_probabilities ${i} want_probability)
    string(REGEX REPLACE "^\"class\": " "" want_class "${want_class}")
    string(REGEX REPLACE "^\"probability\": " "" want_probability "${want_probability}")
    to_units(${want_probability} want)
    math(EXPR gap "${got} - ${want}")
    # Printed with 6 decimals: within rounding and float32 summation order.
    if(NOT class EQUAL want_class OR gap GREATER 20 OR gap LESS -20)
      message(FATAL_ERROR "${what}: image ${i}: class ${class} (${got}e-7), mx-predict says "
                          "${want_class} (${want_probability})")
    endif()
  endforeach()
endfunction()

# find_package(mx) with the moved prefix.
run(0 out ${CMAKE_COMMAND} -S ${SOURCE}/examples/c -B ${W}/example-cmake
    -DCMAKE_PREFIX_PATH=${P} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(0 out ${CMAKE_COMMAND} --build ${W}/example-cmake)
run(0 out ${W}/example-cmake/predict ${MODEL}-symbol.json ${MODEL}-0001.params
    ${W}/t10k-images-idx3-ubyte ${COUNT})
check_predictions("${out}" "find_package(mx) build")
# The imperative C example: autograd's gradients against the formulas.
run(0 out ${W}/example-cmake/imperative)
expect("${out}" "dw = \\[-17 -22 -27; 132 174 216\\], db = \\[-5 42\\]\nok")

# The C++ example (mx.hpp, C++17) with find_package(mx): 300 batches of
# imperative training with autograd, then the validation accuracy, which
# such a short run takes past 0.75 (about 0.8 measured).
run(0 out ${CMAKE_COMMAND} -S ${SOURCE}/examples/cpp -B ${W}/example-cpp
    -DCMAKE_PREFIX_PATH=${P} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(0 out ${CMAKE_COMMAND} --build ${W}/example-cpp)
run(0 out ${W}/example-cpp/train_mlp --data ${FM} --epochs 1 --max-batches 300)
if(NOT out MATCHES "validation accuracy 0\\.([0-9]+)\n$")
  message(FATAL_ERROR "train_mlp printed no final accuracy:\n${out}")
endif()
if(CMAKE_MATCH_1 LESS 7500)
  message(FATAL_ERROR "train_mlp reached only 0.${CMAKE_MATCH_1} after 300 batches:\n${out}")
endif()

# pkg-config with the moved prefix.
set(ENV{PKG_CONFIG_PATH} ${LIBDIR}/pkgconfig)
run(0 version ${PKG_CONFIG} --modversion mx)
run(0 flags ${PKG_CONFIG} --cflags --libs mx)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(0 out ${C_COMPILER} -std=c99 -Wall -Wextra -pedantic -Werror ${SOURCE}/examples/c/predict.c
    ${flags} -Wl,-rpath,${LIBDIR} -o ${W}/predict-pkg-config)
run(0 out ${W}/predict-pkg-config ${MODEL}-symbol.json ${MODEL}-0001.params
    ${W}/t10k-images-idx3-ubyte ${COUNT})
check_predictions("${out}" "pkg-config build")

# Errors cross libmx.so as -1 and a message.
file(WRITE ${W}/bad-symbol.json "{\"nodes\": [")
run(1 out ${W}/predict-pkg-config ${W}/bad-symbol.json ${MODEL}-0001.params
    ${W}/t10k-images-idx3-ubyte 1)
expect("${out}" "predict: MXPredCreate failed: MXPredCreate: symbol JSON: not valid JSON at byte 12")

# A program written for MXNet's headers: either of their include spellings
# with -I<prefix>/include/mx, both headers in one file.
file(WRITE ${W}/mxnet_program.c "#include <mxnet/c_predict_api.h>
#include <mxnet/c_api.h>
#include \"c_predict_api.h\"
#include \"c_api.h\"
int main(void) {
  PredictorHandle h = 0;
  NDArrayHandle a = 0;
  return MXPredFree(h) == 0 && MXNDArrayFree(a) == 0 && MXGetLastError()[0] == '\\0' ? 0 : 1;
}
")
run(0 out ${C_COMPILER} -std=c99 -Wall -Werror -I${P}/include/mx ${W}/mxnet_program.c
    -L${LIBDIR} -lmx -Wl,-rpath,${LIBDIR} -o ${W}/mxnet_program)
run(0 out ${W}/mxnet_program)

# Man pages: one per program, with its options.
file(READ ${P}/share/man/man1/mx-train.1 page)
expect("${page}" "\\.TH MX-TRAIN \"1\"")
expect("${page}" "\\\\-\\\\-resume")
file(READ ${P}/share/man/man1/mx-pack.1 page)
expect("${page}" "SUBCOMMAND INSPECT")

# Bash completion: options, subcommands and a subcommand's options.
function(complete program line expected)
  string(REPLACE "-" "_" fn "_${program}")
  # Lines, not semicolons: run() takes its command as a CMake list.
  run(0 out bash -c "source ${P}/share/bash-completion/completions/${program}
COMP_WORDS=(${line})
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
${fn}
echo \"[\${COMPREPLY[*]}]\"")
  expect("${out}" "^\\[${expected}\\]")
endfunction()
complete(mx-train "mx-train --res" "--resume")
complete(mx-pack "mx-pack ins" "inspect")
complete(mx-pack "mx-pack inspect --no" "--no-idx")
complete(mx-predict "mx-predict --mo" "--model")
