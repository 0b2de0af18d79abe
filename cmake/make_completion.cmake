# Writes OUTPUT, the bash completion of program NAME (at PROGRAM): its
# options, its subcommands and each subcommand's options, as --help lists
# them; anything else (files, values) falls back to bash's default.
#   cmake -DPROGRAM=... -DNAME=mx-pack -DOUTPUT=... -P make_completion.cmake
include(${CMAKE_CURRENT_LIST_DIR}/program_help.cmake)

program_help(${PROGRAM} "" top)
help_options("${top}" top_options)
help_subcommands("${top}" subcommands)
string(REPLACE "-" "_" function "_${NAME}")
string(REPLACE ";" " " subcommand_words "${subcommands}")
string(REPLACE ";" " " top_words "${top_options}")

set(cases)
foreach(sub IN LISTS subcommands)
  program_help(${PROGRAM} ${sub} sub_help)
  help_options("${sub_help}" sub_options)
  string(REPLACE ";" " " sub_words "${sub_options}")
  string(APPEND cases "    ${sub}) words=\"${sub_words}\" ;;\n")
endforeach()

file(WRITE ${OUTPUT} "# bash completion for ${NAME}, generated from ${NAME} --help
${function}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} sub='' words i
  local subcommands='${subcommand_words}'
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ \" \$subcommands \" == *\" \${COMP_WORDS[i]} \"* ]]; then
      sub=\${COMP_WORDS[i]}
      break
    fi
  done
  case \$sub in
${cases}    *) words='${top_words}' ;;
  esac
  if [[ \$cur == -* ]]; then
    COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))
  elif [[ -z \$sub && -n \$subcommands ]]; then
    COMPREPLY=(\$(compgen -W \"\$subcommands\" -- \"\$cur\"))
  fi
}
complete -o default -F ${function} ${NAME}
")
