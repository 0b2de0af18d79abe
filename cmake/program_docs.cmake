# Man pages (help2man, from each program's --help) and bash completion (from
# the options and subcommands the same --help lists) for every program of
# cmd/, built with the programs and installed under share/.
get_property(_mx_programs GLOBAL PROPERTY MX_PROGRAMS)
find_program(MX_HELP2MAN help2man)
if(NOT MX_HELP2MAN)
  message(STATUS "mx: help2man not found (Debian's help2man): no man pages")
endif()

set(_docs_dir ${PROJECT_BINARY_DIR}/share)
set(_outputs)
foreach(program IN LISTS _mx_programs)
  set(_completion ${_docs_dir}/bash-completion/completions/${program})
  add_custom_command(OUTPUT ${_completion}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
            -DOUTPUT=${_completion} -P ${CMAKE_CURRENT_LIST_DIR}/make_completion.cmake
    DEPENDS ${program} ${CMAKE_CURRENT_LIST_DIR}/make_completion.cmake
            ${CMAKE_CURRENT_LIST_DIR}/program_help.cmake
    COMMENT "Bash completion for ${program}" VERBATIM)
  list(APPEND _outputs ${_completion})
  install(FILES ${_completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          COMPONENT runtime)
  if(MX_HELP2MAN)
    set(_man ${_docs_dir}/man/man1/${program}.1)
    add_custom_command(OUTPUT ${_man}
      COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
              -DHELP2MAN=${MX_HELP2MAN} -DVERSION=${PROJECT_VERSION} -DOUTPUT=${_man}
              -P ${CMAKE_CURRENT_LIST_DIR}/make_manpage.cmake
      DEPENDS ${program} ${CMAKE_CURRENT_LIST_DIR}/make_manpage.cmake
              ${CMAKE_CURRENT_LIST_DIR}/program_help.cmake
      COMMENT "Man page for ${program}" VERBATIM)
    list(APPEND _outputs ${_man})
    install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
  endif()
endforeach()
add_custom_target(mx_program_docs ALL DEPENDS ${_outputs})
