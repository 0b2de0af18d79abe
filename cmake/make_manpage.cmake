# Writes OUTPUT, the man page of program NAME (at PROGRAM), with help2man
# from its --help; the help's first line is the page's one-line description,
# and each subcommand's --help becomes a section of its own.
#   cmake -DPROGRAM=... -DNAME=... -DHELP2MAN=... -DVERSION=... -DOUTPUT=... -P make_manpage.cmake
include(${CMAKE_CURRENT_LIST_DIR}/program_help.cmake)

program_help(${PROGRAM} "" top)
string(REGEX MATCH "^[^\n]*" description "${top}")
string(REGEX REPLACE "[.:]$" "" description "${description}")
string(REPLACE ";" "\\;" description "${description}")  # one argument, not a list
help_subcommands("${top}" subcommands)

# help2man's --include: "[SECTION]" followed by roff text.
set(include_file ${OUTPUT}.include)
set(extra "")
foreach(sub IN LISTS subcommands)
  program_help(${PROGRAM} ${sub} sub_help)
  string(REPLACE "\\" "\\\\" sub_help "${sub_help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" sub_help "${sub_help}")
  string(APPEND extra "[SUBCOMMAND ${sub}]\n.nf\n${sub_help}.fi\n\n")
endforeach()
set(include_option)
if(extra)
  file(WRITE ${include_file} "${extra}")
  set(include_option --include=${include_file})
endif()

get_filename_component(dir ${PROGRAM} DIRECTORY)
get_filename_component(out_dir ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${out_dir})
# help2man runs NAME by the name it is given; run it from the program's folder.
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION}
                        --name=${description} ${include_option} --output=${OUTPUT}
                        ./${NAME}
                WORKING_DIRECTORY ${dir} RESULT_VARIABLE code ERROR_VARIABLE err TIMEOUT 120)
file(REMOVE ${include_file})
if(NOT code EQUAL 0)
  message(FATAL_ERROR "help2man ${NAME} failed (exit code ${code}): ${err}")
endif()
