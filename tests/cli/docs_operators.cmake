# docs/operators.md must be what the registry prints (the registry is the
# single source). Regenerate with scripts/gen_operator_docs.sh.
#   cmake -DPROGRAM=mx-ops -DDOCS=docs/operators.md -P docs_operators.cmake
execute_process(COMMAND ${PROGRAM} --markdown RESULT_VARIABLE code OUTPUT_VARIABLE generated
                ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "mx-ops --markdown failed (${code}): ${err}")
endif()
file(READ ${DOCS} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/operators.md is out of date: run scripts/gen_operator_docs.sh")
endif()
