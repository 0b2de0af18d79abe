# The .deb packages (cmake/packaging.cmake): cpack -G DEB builds mx and
# mx-dev; mx's Depends are exactly what dpkg-shlibdeps says its ELF files
# need (and apt can satisfy them); mx-dev depends on the same mx; the
# packages extracted with dpkg -x (no system-wide install) hold a working
# mx-train and what a C program needs to build against libmx.so.
#   cmake -DBUILD=<build dir> -DSOURCE=... -DFIXTURES=... -DWORK_DIR=... -DVERSION=...
#         -DCPACK=... -DC_COMPILER=... -DPKG_CONFIG=... -P package_deb.cmake
cmake_policy(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})

run(0 out ${CPACK} --config ${BUILD}/CPackConfig.cmake -G DEB -B ${W}/packages)
run(0 arch dpkg --print-architecture)
string(STRIP "${arch}" arch)
set(RUNTIME ${W}/packages/mx_${VERSION}-1_${arch}.deb)
set(DEV ${W}/packages/mx-dev_${VERSION}-1_${arch}.deb)
foreach(deb ${RUNTIME} ${DEV})
  if(NOT EXISTS ${deb})
    file(GLOB made ${W}/packages/*.deb)
    message(FATAL_ERROR "cpack made ${made}, not ${deb}")
  endif()
endforeach()

function(field deb name out_var)
  run(0 value dpkg-deb --field ${deb} ${name})
  string(STRIP "${value}" value)
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

field(${DEV} Depends dev_depends)
expect("${dev_depends}" "^mx \\(= ${VERSION}-1\\)$")
run(0 shlibs dpkg-deb --info ${RUNTIME} shlibs)
expect("${shlibs}" "^libmx 0 mx \\(>= ${VERSION}-1\\)")

# Extract both packages into one root, as they would install.
run(0 out dpkg-deb -x ${RUNTIME} ${W}/root)
run(0 out dpkg-deb -x ${DEV} ${W}/root)
set(R ${W}/root/usr)
foreach(f bin/mx-train bin/mx-predict lib/libmx.so.0 lib/libmx.so include/mx/c_predict_api.h
          lib/cmake/mx/mxConfig.cmake lib/pkgconfig/mx.pc share/man/man1/mx-train.1
          share/bash-completion/completions/mx-train)
  if(NOT EXISTS ${R}/${f})
    message(FATAL_ERROR "the packages lack usr/${f}")
  endif()
endforeach()

# mx's Depends: dpkg-shlibdeps's answer for its ELF files, nothing added by hand.
field(${RUNTIME} Depends depends)
file(GLOB elf_files ${R}/bin/* ${R}/lib/libmx.so.*.*)
file(MAKE_DIRECTORY ${W}/shlibdeps/debian)
file(WRITE ${W}/shlibdeps/debian/control "")
execute_process(COMMAND dpkg-shlibdeps -O --ignore-missing-info -e ${elf_files}
                WORKING_DIRECTORY ${W}/shlibdeps RESULT_VARIABLE code OUTPUT_VARIABLE shlibdeps
                ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "dpkg-shlibdeps failed: ${err}")
endif()
string(REGEX REPLACE "^shlibs:Depends=" "" shlibdeps "${shlibdeps}")
string(STRIP "${shlibdeps}" shlibdeps)
if(NOT depends STREQUAL shlibdeps)
  message(FATAL_ERROR "mx's Depends:\n  ${depends}\ndpkg-shlibdeps:\n  ${shlibdeps}")
endif()
# What every build needs: the C and C++ runtimes (with the versions their
# symbols files give) and the BLAS.
expect("${depends}" "(^|, )libc6 \\(>= [0-9.]+\\)")
expect("${depends}" "(^|, )libstdc\\+\\+6 \\(>= [0-9.]+\\)")
expect("${depends}" "(^|, )libopenblas0(,| |$)")
# Every dependency is a package apt can install (here: simulated).
find_program(APT_GET apt-get)
if(APT_GET)
  run(0 out ${APT_GET} install --simulate ${RUNTIME} ${DEV})
  expect("${out}" "Inst mx \\(${VERSION}-1")
endif()

# The extracted programs run.
run(0 out ${R}/bin/mx-train --help)
expect("${out}" "Usage: mx-train")

# The development package builds a C program against the runtime's library.
set(ENV{PKG_CONFIG_PATH} ${R}/lib/pkgconfig)
run(0 flags ${PKG_CONFIG} --cflags --libs mx)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(0 out ${C_COMPILER} -std=c99 ${SOURCE}/examples/c/predict.c ${flags} -Wl,-rpath,${R}/lib
    -o ${W}/predict)
set(FM /usr/share/datasets/fashion-mnist)
require_fashion_mnist(${FM})
execute_process(COMMAND gzip -dc ${FM}/t10k-images-idx3-ubyte.gz
                OUTPUT_FILE ${W}/t10k-images-idx3-ubyte RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "gzip -dc of ${FM}/t10k-images-idx3-ubyte.gz failed")
endif()
set(MODEL ${FIXTURES}/onnx/lenet/model)
run(0 out ${W}/predict ${MODEL}-symbol.json ${MODEL}-0001.params ${W}/t10k-images-idx3-ubyte 3)
expect("${out}" "^0: [0-9] \\(0\\.[0-9]+\\)\n1: [0-9] \\(0\\.[0-9]+\\)\n2: [0-9] ")
