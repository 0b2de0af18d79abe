# The Python package (python/, issue 25): its pytest files in python/tests/
# run as ctest tests (labels unit and python), and the two Python examples
# (cli and mpi). They use the venv of scripts/python-env.sh in the build tree
# (Debian's python3 with its numpy and pytest, and python/ installed into it
# from a copy); python_install makes or refreshes it first, so the tests see
# the package as it is now. The package finds the build's libmx.so through
# MX_LIBRARY_PATH.
if(NOT MX_SANITIZE STREQUAL "")
  # A sanitized libmx.so cannot be dlopen'ed by an uninstrumented python3
  # (the sanitizer's runtime must come first); the C and C++ tests cover it.
  message(STATUS "mx: sanitizer build; the Python package's tests are not registered")
  return()
endif()
set(MX_PYTHON_VENV ${PROJECT_BINARY_DIR}/python-venv)
set(_py ${MX_PYTHON_VENV}/bin/python)
set(_py_env "MX_LIBRARY_PATH=$<TARGET_FILE_DIR:mx_shared>" "PYTHONDONTWRITEBYTECODE=1"
            "MX_FIXTURES_DIR=${MX_FIXTURES_DIR}")

add_test(NAME python_install
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/python-env.sh ${MX_PYTHON_VENV})
set_tests_properties(python_install PROPERTIES LABELS "unit;python" TIMEOUT 300
                     FIXTURES_SETUP mx_python_env)

# One ctest test per pytest file, so the summary says which part failed.
foreach(part ndarray ops autograd symbol params kvstore io errors)
  add_test(NAME python_${part}
           COMMAND ${_py} -m pytest -q -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/python/tests/test_${part}.py
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/python/tests)
  set_tests_properties(python_${part} PROPERTIES LABELS "unit;python" TIMEOUT 300
                       FIXTURES_REQUIRED mx_python_env ENVIRONMENT "${_py_env}")
endforeach()

# The imperative MLP example, 2 epochs (the 10 of docs/library.md take ~25 s):
# past 0.80 validation accuracy (0.83 on this machine).
add_test(NAME python_example_train_mlp
         COMMAND ${_py} ${PROJECT_SOURCE_DIR}/examples/python/train_mlp.py --epochs 2)
set_tests_properties(python_example_train_mlp PROPERTIES LABELS "cli;python" TIMEOUT 300
                     FIXTURES_REQUIRED mx_python_env ENVIRONMENT "${_py_env}"
                     PASS_REGULAR_EXPRESSION "\nvalidation accuracy 0\\.(8|9)")

# The distributed example: 1 server + 2 Python workers under mpirun
# (mx_mpi_test of kvstore/mpi_tests.cmake: bounded by mpirun's --timeout,
# the runner's limit and ctest's).
if(MX_MPIRUN)
  foreach(kind dist_sync dist_async)
    mx_mpi_test(python_example_${kind} 0 "dist_kvstore 0: ok;dist_kvstore 1: ok"
      COMMAND ${_mpirun} -x MX_LIBRARY_PATH -np 1 ${_server} : -np 2 ${_py}
              ${PROJECT_SOURCE_DIR}/examples/python/dist_kvstore.py ${kind})
    set_property(TEST python_example_${kind} APPEND PROPERTY LABELS python)
    set_property(TEST python_example_${kind} APPEND PROPERTY ENVIRONMENT ${_py_env})
    set_property(TEST python_example_${kind} PROPERTY FIXTURES_REQUIRED mx_python_env)
  endforeach()
endif()
