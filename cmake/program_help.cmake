# Reading a program's --help (CLI11's layout), for its man page and bash
# completion. Included by make_manpage.cmake and make_completion.cmake.

# The help text of PROGRAM [SUBCOMMAND] --help.
function(program_help program subcommand out_var)
  execute_process(COMMAND ${program} ${subcommand} --help RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL 0 OR out STREQUAL "")
    message(FATAL_ERROR "${program} ${subcommand} --help failed (exit code ${code}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# The help's lines as a CMake list (semicolons in the text kept as commas).
function(help_lines text out_var)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

# Every option flag (-h --help --model ...): CLI11 starts an option's line
# with two spaces and its flags, separated by commas.
function(help_options text out_var)
  help_lines("${text}" lines)
  set(flags)
  foreach(line IN LISTS lines)
    if(line MATCHES "^  (-[-A-Za-z0-9_,]+)")
      string(REPLACE "," ";" names "${CMAKE_MATCH_1}")
      foreach(name IN LISTS names)
        if(name MATCHES "^--?[A-Za-z0-9]")
          list(APPEND flags ${name})
        endif()
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

# The names in the "Subcommands:" section.
function(help_subcommands text out_var)
  help_lines("${text}" lines)
  set(names)
  set(in_section OFF)
  foreach(line IN LISTS lines)
    if(line MATCHES "^Subcommands:")
      set(in_section ON)
    elseif(in_section AND line MATCHES "^  ([A-Za-z][-A-Za-z0-9_]*)")
      list(APPEND names ${CMAKE_MATCH_1})
    elseif(in_section AND NOT line MATCHES "^ ")
      set(in_section OFF)
    endif()
  endforeach()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()
