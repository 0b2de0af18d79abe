# mx-pack text run as a user runs it: a committed UTF-8 fixture packed into
# the bytes an independent Python packer wrote through MXNet's
# MXIndexedRecordIO (tests/fixtures/text, scripts/fixtures/make_text_fixtures.py),
# Debian's fortunes, mx-pack inspect on token files, and bad text.
#   cmake -DPROGRAM=... -DFIXTURES=... -DWORK_DIR=... [-DFORTUNES=dir] -P mx_pack_text.cmake

include(${CMAKE_CURRENT_LIST_DIR}/mx_pack_checks.cmake)

# Nothing under PREFIX.* or a temporary name: a failed run writes nothing.
function(expect_nothing_written prefix)
  file(GLOB written ${prefix}.* ${prefix}_* ${WORK_DIR}/*.tmp.*)
  if(written)
    message(FATAL_ERROR "a failed run left files behind: ${written}")
  endif()
endfunction()

# The bytes [offset, offset + length) of a file as lower-case hex.
function(hex_of path offset length out_var)
  file(READ ${path} bytes OFFSET ${offset} LIMIT ${length} HEX)
  set(${out_var} "${bytes}" PARENT_SCOPE)
endfunction()

set(T ${FIXTURES}/text)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(W ${WORK_DIR})

# --- The fixture: characters (é, €, Greek, CJK, emoji), a tab, a backslash, a blank
# line inside a document, an empty document; the same bytes as the Python packer.
expect_run(0 "char.rec: 4 documents, 168 tokens in 4 records.*char.vocab: 69 tokens \\(char\\), 0 <unk>, 1 <eos>"
           "" text ${T}/utf8.txt -o ${W}/char --record-separator %)
foreach(ext rec idx vocab)
  expect_same_file(${W}/char.${ext} ${T}/utf8_char.${ext})
endforeach()
# Words, capped at 12 (19 of 34 tokens unknown), in records of at most 4 ids.
expect_run(0 "word.rec: 4 documents, 34 tokens in 9 records.*19 unknown \\(55.88%\\)" ""
           text ${T}/utf8.txt -o ${W}/word --record-separator % --tokens word --max-vocab 12
           --record-tokens 4)
foreach(ext rec idx vocab)
  expect_same_file(${W}/word.${ext} ${T}/utf8_word.${ext})
endforeach()
# The vocabulary: special tokens first, escapes, multi-byte characters on their own lines.
file(STRINGS ${W}/char.vocab vocab ENCODING UTF-8)
list(GET vocab 0 first)
list(GET vocab 1 second)
if(NOT first STREQUAL "<unk>" OR NOT second STREQUAL "<eos>")
  message(FATAL_ERROR "char.vocab starts with '${first}', '${second}', not <unk>, <eos>")
endif()
foreach(token "\\s" "\\n" "\\t" "\\\\" "€" "δ" "日" "🙂")
  list(FIND vocab "${token}" at)
  if(at LESS 2)
    message(FATAL_ERROR "char.vocab has no line '${token}': ${vocab}")
  endif()
endforeach()
# The first record: RecordIO magic, length 24 + 4 * 25 (23 characters, the newline and
# <eos>), "MXTK", count 25, document 0, position 0; its last id is <eos> (1).
hex_of(${W}/char.rec 0 32 head)
if(NOT head STREQUAL "0a23d7ce7c0000004d58544b1900000000000000000000000000000000000000")
  message(FATAL_ERROR "char.rec's first record header is ${head}")
endif()
hex_of(${W}/char.rec 128 4 last_id)
if(NOT last_id STREQUAL "01000000")
  message(FATAL_ERROR "the first document does not end with <eos>: ${last_id}")
endif()
expect_run(0 "char.rec: 4 records.*every record indexed.*token records: 4 \\(4 documents, 168 tokens, ids 0..68\\).*vocabulary .*char.vocab: 69 tokens.*verdict: OK"
           "" inspect ${W}/char.rec)
# Ids checked against the vocabulary: with a 3-token one, every record is bad.
file(COPY_FILE ${W}/char.rec ${W}/small.rec)
file(WRITE ${W}/small.vocab "<unk>\n<eos>\n\\n\n")
expect_run(2 "bad records: 4.*small.rec: byte 0: token record: id 0 of document 0 is [0-9]+, outside the vocabulary's 3 tokens.*PROBLEMS FOUND"
           "small.rec: 0 damaged region\\(s\\), 4 bad record\\(s\\)" inspect ${W}/small.rec --no-idx)

# --- A slice of Debian's fortunes: three files, 10% for validation, one vocabulary.
if(FORTUNES AND EXISTS ${FORTUNES}/fortunes)
  expect_run(0 "fort_train.rec: [0-9]+ documents.*fort_val.rec: [0-9]+ documents.*fort.vocab: [0-9]+ tokens \\(char\\).*3 file\\(s\\)"
             "" text ${FORTUNES}/fortunes ${FORTUNES}/goedel ${FORTUNES}/linuxcookie -o ${W}/fort
             --record-separator % --val-ratio 0.1)
  expect_run(0 "token records: [0-9]+.*vocabulary .*fort.vocab.*verdict: OK" "" inspect
             ${W}/fort_train.rec)
  expect_run(0 "vocabulary .*fort.vocab.*verdict: OK" "" inspect ${W}/fort_val.rec)
  # Another file with the training vocabulary: a copy of it beside the new records.
  expect_run(0 "debian.rec: [0-9]+ documents.*fort_debian.vocab: .*" "" text ${FORTUNES}/debian
             -o ${W}/fort_debian --record-separator % --vocab ${W}/fort.vocab)
  expect_same_file(${W}/fort_debian.vocab ${W}/fort.vocab)
  # The folder: its regular files without the strfile indexes; the .u8 links are skipped.
  file(GLOB entries ${FORTUNES}/*)
  set(regular 0)
  foreach(entry ${entries})
    if(NOT IS_SYMLINK ${entry} AND NOT IS_DIRECTORY ${entry} AND NOT entry MATCHES "\\.dat$")
      math(EXPR regular "${regular} + 1")
    endif()
  endforeach()
  expect_run(0 "all.rec: [0-9]+ documents.*all.vocab: [0-9]+ tokens \\(word\\).*\n${regular} file\\(s\\)"
             "" text --exclude "*.dat" ${FORTUNES} -o ${W}/all --record-separator % --tokens word
             --max-vocab 5000)
  expect_run(0 "ids 0..4999\\).*verdict: OK" "" inspect ${W}/all.rec)
else()
  message(STATUS "fortunes not found; the fortunes cases are skipped (apt-get install fortunes)")
endif()

# --- Bad text: exit code 2, the file and byte named, nothing written.
execute_process(COMMAND sh -c "printf 'ok\\n\\303\\050x\\n' > bad.txt" WORKING_DIRECTORY ${W})
expect_run(2 "" "mx-pack: error: .*bad.txt: byte 4: invalid UTF-8: byte 0x28 should continue the character that byte 0xc3 at byte 3 starts"
           text ${T}/utf8.txt ${W}/bad.txt -o ${W}/out)
expect_nothing_written(${W}/out)
file(WRITE ${W}/empty.txt "")
expect_run(2 "" "mx-pack: error: .*empty.txt: the file is empty" text ${W}/empty.txt -o ${W}/out)
file(WRITE ${W}/seps.txt "%\n%\n")
expect_run(2 "" "seps.txt: no tokens in its 4 bytes" text ${W}/seps.txt -o ${W}/out
           --record-separator %)
# Bad vocabularies: a repeated token, more tokens than --max-vocab, a bad escape.
file(WRITE ${W}/dup.vocab "<unk>\n<eos>\na\nb\na\n")
expect_run(2 "" "mx-pack: error: .*dup.vocab:5: token 'a' repeats line 3" text ${T}/utf8.txt
           -o ${W}/out --vocab ${W}/dup.vocab)
expect_run(2 "" "char.vocab:6: the vocabulary holds more than 5 tokens \\(--max-vocab 5\\)" text
           ${T}/utf8.txt -o ${W}/out --vocab ${W}/char.vocab --max-vocab 5)
file(WRITE ${W}/escape.vocab "<unk>\n<eos>\nx\\q\n")
expect_run(2 "" "escape.vocab:3: column 2: unknown escape" text ${T}/utf8.txt -o ${W}/out
           --vocab ${W}/escape.vocab)
expect_nothing_written(${W}/out)
# Usage errors, and a runtime failure (exit code 1).
expect_run(2 "" "" text)
expect_run(2 "" "" text ${T}/utf8.txt -o ${W}/out --tokens bytes)
expect_run(2 "" "--record-separator and --line-records" text ${T}/utf8.txt -o ${W}/out
           --record-separator % --line-records)
expect_run(1 "" "cannot write '.*no-such-dir/out.rec'" text ${T}/utf8.txt -o ${W}/no-such-dir/out)
expect_run(0 "Usage: .*--tokens.*--max-vocab.*--record-separator" "" text --help)
